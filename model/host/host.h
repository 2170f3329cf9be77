// host.h - one node's host side: the root complex with its root ports (the
// PEACH2 slot, and the InfiniBand HCA's slot where the node has one), host
// DRAM registered with the library, GPU memory exposed by GPUDirect RDMA, and
// the CPU's MMIO and PIO stores into the devices.
//
// Per TLP arriving from a device: a memory write lands in host or GPU memory
// after the write latency; a memory read is answered with completions (split at
// the read completion boundary) after the read latency, paced by the memory's
// read rate; a completion answers one of the CPU's register reads. Each root
// port has its own write buffer and read engines and answers on itself; a CPU
// access goes to the port whose windows hold its address (the first port when
// none does: PEACH2's slot).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include <systemc>

#include "core/clock.h"
#include "pcie/link.h"
#include "core/params.h"
#include "core/timed_queue.h"

namespace p2 {

// GPU memory that does not live in the node's arena: ranges of the GPU window
// backed by a real GPU's memory (the simulator's CUDA IPC mappings,
// sim/cuda_ipc.h). The model reaches them only through these calls, which
// move the bytes at once; when they land or leave is still the model's
// affair, so the timing is the arena's to the picosecond.
class ExternalGpuMemory {
 public:
  virtual ~ExternalGpuMemory() = default;
  // Whether [off, off + len) of the GPU window touches an external range
  // (offsets from the window's start, P2_GPU_OFFSET); read and write then
  // refuse an access that does not lie inside one.
  virtual bool covers(uint64_t off, uint64_t len) const = 0;
  // Move bytes; false when the device refused (reported by the implementation).
  virtual bool read(uint64_t off, uint8_t* dst, uint64_t len) = 0;
  virtual bool write(uint64_t off, const uint8_t* src, uint64_t len) = 0;
};

// Backing bytes of one node's memories (the emulator's shared arenas, or
// plain buffers in tests).
struct NodeMemory {
  uint8_t* host = nullptr;
  uint64_t host_size = 0;
  uint8_t* gpu = nullptr;
  uint64_t gpu_size = 0;
};

// What a host is configured with: HOST-scope timings, the CPU's store
// costs, and the completion sizes of the link it answers on (its slot).
struct HostConfig {
  struct MemoryTiming {
    sc_core::sc_time read_latency, write_latency;
    double read_bytes_per_ns = 0;
    double write_bytes_per_ns = 0;  // 0: writes never limit
    // A read behind posted writes waits this long after the last was taken,
    // and later writes wait behind the read (gpu_read_flush_ns); 0: neither.
    sc_core::sc_time read_flush;
  };
  MemoryTiming host, gpu;
  sc_core::sc_time mmio_post;     // CPU store or load to its TLP leaving the root port
  sc_core::sc_time load_return;   // a load's completion at the root port to the load retiring
  uint32_t pio_store_bytes = 0;   // per CPU store into a PIO window
  sc_core::sc_time pio_store_gap;
  uint32_t max_cpl_bytes = 0;     // host_cpl_bytes, at most the slot's max payload
  uint32_t rcb = 0;               // the slot's read completion boundary

  static HostConfig make(const Params& p, const LinkConfig& slot);
};

struct HostStats {
  uint64_t writes = 0, write_bytes = 0, dropped_writes = 0;
  uint64_t reads = 0, read_bytes = 0, unsupported_reads = 0;
  uint64_t cpu_stores = 0, mmio_reads = 0;
  uint64_t tlps_sent = 0;  // TLPs this root complex issued: CPU stores and loads, completions
  sc_core::sc_time write_latency_total, write_latency_max;  // TLP birth to visible
};

class Host : public sc_core::sc_module, public LinkClient {
 public:
  Host(sc_core::sc_module_name name, unsigned node, const HostConfig& config, NodeMemory memory);
  // Where a root port differs from the host's defaults: the windows of the
  // node's address space (offsets, as in peach2_hw.h) whose CPU accesses go
  // out on it, its largest completion, and the memories' timing as seen from
  // it (a device on the other socket reads GPU memory across the socket link).
  struct PortConfig {
    std::vector<std::pair<uint64_t, uint64_t>> cpu_windows;  // (offset, size)
    uint32_t max_cpl_bytes = 0;                               // 0: the host's
    std::optional<HostConfig::MemoryTiming> host, gpu;        // none: the host's
  };
  static constexpr unsigned kMaxRootPorts = 4;
  // The Root Complex end of a device's slot link; the first attached is the
  // default port (PEACH2's N link). Throws std::logic_error beyond kMaxRootPorts.
  void attach(LinkPort& port, const PortConfig& config);
  void attach(LinkPort& port);  // with the host's defaults

  // The CPU's accesses, issued at the current simulated time.
  void mmio_write(uint64_t addr, uint64_t value);  // posted 8-byte store
  void mmio_read(uint64_t addr, std::function<void(uint64_t value, bool ok)> done);
  // Stores of pio_store_bytes each, pio_store_ns apart, into the PIO window.
  void pio_write(uint64_t addr, const uint8_t* data, uint32_t len);

  // Called after written bytes became visible in host or GPU memory.
  void set_write_observer(std::function<void(uint64_t addr, uint32_t len)> f) {
    write_observer_ = std::move(f);
  }
  // Called before any bytes of a write land (the observer above comes
  // after): one who must act before a reader of the memory can see them.
  void set_before_write(std::function<void()> f) { before_write_ = std::move(f); }
  // A device on the node's memory bus (the SR8000 NIA, which is no PCIe
  // device) writing `len` bytes at `addr` now: they are visible at once and
  // the write observer is told. False, nothing written, if the range is not
  // this node's memory.
  bool bus_write(uint64_t addr, const uint8_t* data, uint32_t len);
  // The bytes behind a local global address range, or nullptr if unmapped or
  // external (read() reaches those too).
  uint8_t* translate(uint64_t addr, uint64_t len) const;
  // Copies [addr, addr + len) of this node's memory, arena or external, into
  // out; false if the range is not this node's memory.
  bool read(uint64_t addr, uint8_t* out, uint64_t len) const;
  // GPU window ranges backed by real GPU memory (nullptr: none); not owned.
  void set_external_gpu(ExternalGpuMemory* ext) { external_gpu_ = ext; }
  ExternalGpuMemory* external_gpu() const { return external_gpu_; }
  unsigned node() const { return node_; }
  const HostStats& stats() const { return stats_; }

  void tlp_arrived(LinkPort& port, TlpPtr tlp) override;

 private:
  // One memory behind a root port: where it is and how it answers there.
  struct Memory {
    uint8_t* bytes = nullptr;
    uint64_t size = 0;
    sc_core::sc_time read_latency, write_latency;
    double read_bytes_per_ns = 0;
    double write_bytes_per_ns = 0;    // 0: unlimited
    // read_time_of[n]: the read data path's time for n bytes, for every
    // completion size (made once: a float-to-time conversion per completion
    // was a tenth of the host's instructions on a bulk read).
    std::vector<sc_core::sc_time> read_time_of;
    sc_core::sc_time read_time(uint32_t bytes) const {
      return bytes < read_time_of.size() ? read_time_of[bytes] : ns(bytes / read_bytes_per_ns);
    }
    sc_core::sc_time read_free;       // read data path busy until
    sc_core::sc_time write_free;      // write data path busy until
    sc_core::sc_time read_flush;      // MemoryTiming::read_flush
    sc_core::sc_time write_taken;     // the last write taken by the memory
    sc_core::sc_time answered;        // the last read answered: writes behind it wait
    TimedQueue<TlpPtr> completions;   // answers in the order they leave
  };
  struct RootPort {
    LinkPort* link = nullptr;
    std::vector<std::pair<uint64_t, uint64_t>> cpu_windows;
    uint32_t max_cpl = 0, rcb = 0;
    Memory host_mem, gpu_mem;
    TimedQueue<TlpPtr> writes_due;  // arrived writes becoming visible, in order
    sc_core::sc_time host_visible;  // when the last write into host memory is visible
  };
  Memory* memory_for(RootPort& rp, uint64_t addr, uint64_t len, uint64_t* offset);
  // The arena bytes of a local range as the CPU sees it (no root port);
  // *gpu tells whether it lies in the GPU window, *offset its offset there.
  uint8_t* locate(uint64_t addr, uint64_t len, bool* gpu, uint64_t* offset) const;
  // Whether [off, off + len) of the GPU window is served by the external GPU memory.
  bool external(bool gpu, uint64_t off, uint64_t len) const {
    return gpu && external_gpu_ && external_gpu_->covers(off, len);
  }
  RootPort& port_of(const LinkPort& link);
  unsigned port_for_cpu(uint64_t addr) const;
  void serve_read(RootPort& rp, TlpPtr req);
  void send(RootPort& rp, TlpPtr tlp);
  void issue_from_cpu(sc_core::sc_time at, TlpPtr tlp);
  void on_writes_due();
  void on_completions_due();
  void on_stores_due();
  void on_loads_due();
  uint64_t next_id() { return (static_cast<uint64_t>(node_) << 48) | next_tlp_id_++; }

  unsigned node_;
  HostConfig config_;
  NodeMemory memory_;
  std::array<RootPort, kMaxRootPorts> ports_;
  unsigned nports_ = 0;
  std::function<void(uint64_t, uint32_t)> write_observer_;
  std::function<void()> before_write_;
  ExternalGpuMemory* external_gpu_ = nullptr;
  uint8_t next_tag_ = 0;
  uint64_t next_tlp_id_ = 0;
  std::map<uint8_t, std::function<void(uint64_t, bool)>> reads_in_flight_;
  // Loads whose completions arrived, retiring in the core in order.
  struct LoadDone {
    std::function<void(uint64_t, bool)> done;
    uint64_t value;
    bool ok;
  };
  TimedQueue<LoadDone> loads_due_;
  // The CPU's loads and stores to the devices, in order, with their root port.
  TimedQueue<std::pair<unsigned, TlpPtr>> stores_due_;
  sc_core::sc_time cpu_store_free_;
  HostStats stats_;
};

}  // namespace p2
