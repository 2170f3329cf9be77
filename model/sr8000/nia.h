// nia.h - the SR8000 Network Interface Adapter of one node (sr8000_hw.h).
//
// Registers: a CPU store reaches the NIA sr8000_mmio_post_ns after it issued,
// a load is answered sr8000_reg_read_ns after it issued (so it sees the
// stores before it).
//
// Send engine, one TCW at a time in kick order: the kicked TCW's version word
// is compared with the NIA's cache of translated TCWs; a hit costs
// sr8000_kick_reuse_ns, a miss or a changed version sr8000_kick_modified_ns
// (fetch, validate, translate), then the TCW is checked (flags, node, source
// range). The data is read from node memory (sr8000_mem_read_latency_ns, then
// at sr8000_mem_read_mbps) and cut into packets of at most
// sr8000_packet_bytes, each sent sr8000_packet_setup_ns after its data is
// read, onto the node's link (a self-addressed TCW loops back inside the NIA).
// A remote write is done when the destination NIA acknowledges its last
// packet: the ack (a header-only packet on the reverse route) leaves there
// sr8000_packet_setup_ns after that packet was checked, and the TCW's status
// word is written sr8000_mem_write_latency_ns after the ack's tail arrived
// here. A broadcast or a self-addressed TCW is done once its last packet's
// tail has left (status written sr8000_mem_write_latency_ns later). A refused
// TCW gets its error there and sends nothing.
//
// Receive, in arrival order: sr8000_rx_process_ns after a packet's tail
// arrived its area and range are checked (then, for a remote write's last
// packet, the ack goes), and sr8000_mem_write_latency_ns later its data
// (then, on the last packet, the flag) is visible in memory. A packet outside
// its area is dropped and counted (SR_REG_ERROR(S)); it is acknowledged all
// the same (the ack reports delivery, not the receiver's verdict).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <set>
#include <utility>
#include <string>
#include <vector>

#include "core/traffic.h"
#include "host/host.h"
#include "core/agenda.h"
#include "sr8000/config.h"
#include "sr8000/packet.h"
#include "sr8000_hw.h"

namespace p2 {

class SrBarrierUnit;

// What a NIA needs of the network that joins it to the others
// (Sr8000Network): the links a packet crosses and the barrier unit. The NIA
// depends on this, not on the network, which builds the NIAs.
class SrFabric {
 public:
  virtual ~SrFabric() = default;
  // The links a packet from `src` to `dst` crosses (none: to itself).
  virtual std::vector<SrLink*> route(unsigned src, unsigned dst) const = 0;
  // A broadcast's links from its root up to the crossbar that serialises.
  virtual std::vector<SrLink*> broadcast_route(unsigned src) const = 0;
  virtual SrBarrierUnit& barrier() = 0;
};

struct SrNiaStats {
  uint64_t kicks = 0, kicks_reused = 0, tcw_errors = 0;
  uint64_t packets_sent = 0, bytes_sent = 0, packets_received = 0, bytes_received = 0;
  uint64_t acks_sent = 0, acks_received = 0;
  uint64_t rx_errors = 0, broadcasts_sent = 0, broadcasts_received = 0, barriers = 0;
  sc_core::sc_time tcw_latency_total;  // kick arrival to status written
};

class Nia : public SrSink {
 public:
  Nia(unsigned node, const Sr8000Config& config, Host& host, Agenda& agenda, SrFabric& net);

  unsigned node() const { return node_; }
  void mmio_write(uint64_t offset, uint64_t value);
  void mmio_read(uint64_t offset, std::function<void(uint64_t, bool)> done);
  uint64_t peek(uint64_t offset) const;
  void set_change_observer(std::function<void()> f) { changed_ = std::move(f); }

  void packet_arrived(SrLink& from, SrPacketPtr p) override;
  // The barrier unit's release of colour `color` at this node.
  void barrier_released(unsigned color, unsigned status);

  const SrNiaStats& stats() const { return stats_; }
  // Each TCW sent is a transfer (a broadcast: one to each member).
  void set_traffic_observer(TrafficObserver* observer) { traffic_ = observer; }
  // What a CPU waiting on the memory word at `addr` waits for, in the NIA's
  // terms ("" when the word is none of its): a TCW's status, or a word of a
  // remote-DMA area (which only a remote write changes).
  std::string describe_word(uint64_t addr) const;

 private:
  struct Kick {
    uint64_t addr;
    bool broadcast;
    sc_core::sc_time at;
  };
  struct CachedTcw {
    uint64_t addr;
    sr_tcw tcw;
  };
  void reg_write(uint64_t offset, uint64_t value);
  void start_next();
  void run_tcw(const Kick& k, const sr_tcw& t);
  sr_status check_tcw(const sr_tcw& t, bool broadcast) const;
  void finish_tcw(const Kick& k, sc_core::sc_time at, sr_status status);
  // A packet's tail is here, from `in` (nullptr: from this NIA itself).
  void accept(SrPacketPtr p, SrLink* in);
  void receive(const SrPacketPtr& p, SrLink* in);
  // The last packet of remote write `p` was checked: acknowledge it to its source.
  void send_ack(const SrPacket& p);
  // The ack of this NIA's message `message` is here (its tail, from `in`).
  void ack_arrived(const SrPacket& ack, SrLink* in);
  bool area_range(uint32_t area, uint64_t offset, uint64_t len, uint64_t* bus) const;
  sr_status check_group(uint64_t group) const;
  void notify() {
    if (changed_) changed_();
  }

  unsigned node_;
  TrafficObserver* traffic_ = nullptr;
  const Sr8000Config& config_;
  Host& host_;
  Agenda& agenda_;
  SrFabric& net_;
  std::function<void()> changed_;

  std::array<uint64_t, SR_AREAS> area_base_{}, area_size_{};
  std::array<uint64_t, SR_COLORS> group_{}, group_status_{}, bar_state_{};
  std::array<uint64_t, SR_COLORS> arm_{}, arm_size_{}, bcast_state_{};
  std::array<bool, SR_COLORS> armed_{};
  std::array<unsigned, SR_COLORS> bcast_error_{};  // of the broadcast being received
  uint64_t error_ = 0;

  std::deque<Kick> kicks_;
  bool engine_busy_ = false;
  std::list<CachedTcw> cache_;  // most recently kicked first
  uint64_t messages_ = 0;
  std::map<uint64_t, Kick> awaiting_ack_;  // remote writes sent, by message, until acknowledged
  sc_core::sc_time rx_free_;    // the receive pipeline's last write becomes visible then
  std::set<std::pair<unsigned, uint64_t>> rx_bad_;  // (source, message) with a refused packet
  SrNiaStats stats_;
};

}  // namespace p2
