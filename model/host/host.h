// host.h - one node's host side of the N link: the root complex, host DRAM
// registered with the library, GPU memory exposed by GPUDirect RDMA, and the
// CPU's MMIO and PIO stores into the board.
//
// Per TLP arriving from the board: a memory write lands in host or GPU memory
// after the write latency; a memory read is answered with completions (split at
// the read completion boundary) after the read latency, paced by the memory's
// read rate; a completion answers one of the CPU's register reads.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>

#include <systemc>

#include "pcie/link.h"
#include "sim/params.h"

namespace p2 {

// Backing bytes of one node's memories (the emulator's shared arenas, or
// plain buffers in tests).
struct NodeMemory {
  uint8_t* host = nullptr;
  uint64_t host_size = 0;
  uint8_t* gpu = nullptr;
  uint64_t gpu_size = 0;
};

class Host : public sc_core::sc_module, public LinkClient {
 public:
  Host(sc_core::sc_module_name name, unsigned node, const Params& params, NodeMemory memory);
  void attach(LinkPort& port);  // the Root Complex end of this node's N link

  // The CPU's accesses, issued at the current simulated time.
  void mmio_write(uint64_t addr, uint64_t value);  // posted 8-byte store
  void mmio_read(uint64_t addr, std::function<void(uint64_t value, bool ok)> done);
  // Stores of pio_store_bytes each, pio_store_ns apart, into the PIO window.
  void pio_write(uint64_t addr, const uint8_t* data, uint32_t len);

  // Called after written bytes became visible in host or GPU memory.
  void set_write_observer(std::function<void(uint64_t addr, uint32_t len)> f) {
    write_observer_ = std::move(f);
  }
  // The bytes behind a local global address range, or nullptr if unmapped.
  uint8_t* translate(uint64_t addr, uint64_t len) const;
  unsigned node() const { return node_; }

  void tlp_arrived(LinkPort& port, TlpPtr tlp) override;
  void tx_space(LinkPort& port) override;

 private:
  struct Pending;
  void send(TlpPtr tlp);
  void serve_read(TlpPtr req);
  void on_writes_due();
  void on_reads_due();
  void on_pio_due();

  unsigned node_;
  const Params& params_;
  NodeMemory memory_;
  LinkPort* port_ = nullptr;
  std::function<void(uint64_t, uint32_t)> write_observer_;
  uint8_t next_tag_ = 0;
  std::map<uint8_t, std::function<void(uint64_t, bool)>> reads_in_flight_;
  // Writes waiting to become visible, in arrival order (visible time nondecreasing).
  std::deque<std::pair<sc_core::sc_time, TlpPtr>> writes_due_;
  sc_core::sc_event writes_event_;
  // Completions scheduled by the read server, in order of their send time.
  std::deque<std::pair<sc_core::sc_time, TlpPtr>> cpls_due_;
  sc_core::sc_event cpls_event_;
  sc_core::sc_time host_read_free_, gpu_read_free_;  // read data path busy until
  // CPU stores into the board (PIO), one TLP per store, in issue order.
  std::deque<std::pair<sc_core::sc_time, TlpPtr>> stores_due_;
  sc_core::sc_event stores_event_;
  sc_core::sc_time cpu_store_free_;
  std::deque<TlpPtr> tx_backlog_;  // waiting for room in the link's transmit queue
};

}  // namespace p2
