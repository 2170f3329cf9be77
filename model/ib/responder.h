// responder.h - the responder side of RDMA READ and atomics in one HCA: a
// request placed by the HCA's receive side is served a read latency later
// (ib_hca_read_ns). A read becomes MTU response packets whose payload the
// HCA reads from its memory as it reads a send's data, each rail's reads in
// arrival order and a few packets ahead of its wire (its share of the DMA
// read tags: ib_hca_max_reads / 2 reads), so reads served on both rails at
// once share the slot link as a striped write's packets do; an atomic waits for
// the atomic unit, which runs one atomic at a time: the 8-byte read, the
// operation (ib_hca_atomic_ns), the result written, the response with the
// old value. Depends on the transport's rules (transport.h) and the agenda;
// the HCA (hca.cc) owns it and lends it what it asks for through Host.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include <systemc>

#include "core/agenda.h"
#include "ib/config.h"
#include "ib/packet.h"
#include "ib_hw.h"

namespace p2 {

class IbResponder {
 public:
  // What the responder asks of its HCA.
  struct Host {
    // A packet to send on its rail, its payload read from local memory at src.
    std::function<void(IbPacketPtr, uint64_t src)> send;
    // An 8-byte DMA read of local memory; its data comes back by atomic_read_done.
    std::function<void(uint64_t addr)> read_word;
    // A DMA write of local memory.
    std::function<void(uint64_t addr, const uint8_t* data, uint32_t len)> write;
    // The next packet id of this HCA.
    std::function<uint64_t()> packet_id;
    uint64_t* reads_served = nullptr;
    uint64_t* atomics_served = nullptr;
  };
  IbResponder(unsigned node, const IbConfig& config, Agenda& agenda, Host host);

  // A read or atomic request from the network, placed on `rail`.
  void request(const IbPacket& req, unsigned rail);
  // The atomic unit's 8-byte read returned.
  void atomic_read_done(const std::vector<uint8_t>& old_bytes);
  // A read response packet of `rail` has all its data (the HCA sends it).
  void response_ready(unsigned rail);

 private:
  struct AtomicJob {
    IbPacket req;  // its header fields (no payload)
    unsigned rail = 0;
  };
  struct ReadJob {
    IbPacket req;
    uint32_t off = 0;  // the next response packet's
  };
  void serve(const IbPacket& req, unsigned rail);
  void pump(unsigned rail);
  void run_atomic();
  IbPacketPtr response_to(const IbPacket& req, unsigned rail, uint32_t offset, uint32_t payload);

  unsigned node_;
  const IbConfig& config_;
  Agenda& agenda_;
  Host host_;
  std::deque<AtomicJob> atomics_;
  bool atomic_busy_ = false;
  std::array<std::deque<ReadJob>, IB_PORTS> reads_;  // per rail, in arrival order
  std::array<uint32_t, IB_PORTS> building_{};        // response packets reading their data
  uint32_t ahead_ = 1;                               // packets a rail builds ahead
};

}  // namespace p2
