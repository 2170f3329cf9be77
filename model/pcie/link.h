// link.h - a PCIe Gen2 link between two ports, with its data link layer:
// serialisation at the lane rate after 8b/10b, per-TLP framing, sequence
// number and LCRC, Ack and UpdateFC DLLPs on the reverse direction, and
// credit-based flow control per class (posted, non-posted, completion; header
// and data credits). A link joins one Root Complex end to one Endpoint end.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include <systemc>

#include "pcie/tlp.h"
#include "core/params.h"

namespace p2 {

enum class LinkEndKind { RootComplex, Endpoint };
const char* link_end_kind_name(LinkEndKind k);

// Link-scope parameters of one link, after topology overrides.
struct LinkConfig {
  explicit LinkConfig(const Params& p);  // copies the LINK-scope fields
  double lanes, gtps, encoding;
  uint32_t tlp_framing_bytes, dllp_bytes, ack_coalesce_tlps;
  sc_core::sc_time latency;          // link_latency_ns + cable_m * cable_ns_per_m
  sc_core::sc_time fc_update_latency;
  uint32_t posted_hdr_credits, posted_data_credits, nonposted_hdr_credits;
  uint32_t cpl_hdr_credits, cpl_data_credits;  // 0: infinite
  uint32_t max_payload, max_read_request, read_completion_boundary;

  double bytes_per_ns() const { return lanes * gtps * encoding / 8.0; }
  sc_core::sc_time wire_time(uint32_t bytes) const;  // serialisation of `bytes` line bytes
  uint32_t tlp_wire_bytes(const Tlp& t) const {
    return tlp_framing_bytes + t.header_bytes() + t.payload_bytes();
  }
};

// Counters of one direction of a link.
struct LinkDirStats {
  uint64_t tlps = 0;
  uint64_t payload_bytes = 0;   // TLP payload carried
  uint64_t wire_bytes = 0;      // everything on the wire: TLPs and DLLPs
  uint64_t dllps = 0;
  sc_core::sc_time busy;        // time the wire was transmitting (counted when each starts)
  sc_core::sc_time credit_stall;  // time a waiting TLP was held for lack of credits
};

class LinkPort;

// What sits at a link end: a host root complex, or a PEACH2 port.
class LinkClient {
 public:
  virtual ~LinkClient() = default;
  // A TLP finished arriving at `port`. It occupies the receive buffer (and its
  // credits) until the client calls port.release(*tlp) (or release(class,
  // payload bytes) once it gave the TLP away). Called at the arrival time of
  // its last byte, from the scheduler's SystemC method (core/scheduler.h):
  // the client must not wait().
  virtual void tlp_arrived(LinkPort& port, TlpPtr tlp) = 0;
  // The transmit queue of `port` has room again after being full.
  virtual void tx_space(LinkPort& /*port*/) {}
  // Whether tlp_arrived(port, tlp) will change nothing that anything reads
  // before the next TLP arriving at `port` is taken in: then the link need
  // not make the TLP's arrival an event of its own, and hands it over just
  // before that next one. The client promises that one follows: a silent
  // TLP with nothing behind it is never taken in. Asked when the TLP starts
  // on the wire, of a client that called port.allow_silent_arrivals(); the
  // link also checks that taking it in frees no credits and owes no Ack.
  virtual bool arrival_is_silent(const LinkPort& /*port*/, const Tlp& /*tlp*/) const {
    return false;
  }
};

// Called for every TLP put on a wire; statistics and traces attach here, the
// units themselves carry no tracing code.
struct TlpObserver {
  virtual ~TlpObserver() = default;
  virtual void on_tlp_sent(const LinkPort& from, const Tlp& tlp, sc_core::sc_time start,
                           sc_core::sc_time end) = 0;
};

// One end of a link as its owner sees it.
class LinkPort {
 public:
  LinkPort(const LinkPort&) = delete;
  LinkPort& operator=(const LinkPort&) = delete;

  // `client` gets the TLPs arriving here and tx_space(); `tx_capacity` counts
  // TLPs waiting to start on the wire (0: unbounded).
  void attach(LinkClient* client, size_t tx_capacity /*TLPs, 0: unbounded*/);
  // The client answers LinkClient::arrival_is_silent for TLPs arriving here.
  void allow_silent_arrivals();
  bool can_send() const;
  // Queues for transmission (see can_send(); throws std::logic_error when full,
  // std::invalid_argument above the link's max payload / max read request).
  void send(TlpPtr tlp);
  // The TLP received at this end left its receive buffer: its credits go back
  // to the far transmitter by UpdateFC. Throws std::logic_error if not held.
  void release(const Tlp& tlp);
  // Same, for a client that no longer holds the TLP (it forwarded it): the
  // TLP's class and its payload_bytes() (0 for a MemRead).
  void release(FcClass cls, uint32_t payload_bytes);
  LinkEndKind kind() const { return kind_; }
  const std::string& name() const { return name_; }
  const LinkDirStats& tx_stats() const;  // what this end transmitted
  size_t tx_queued() const;              // TLPs waiting to start
  // The client's tx_space() is called when the next TLP starts, even if the
  // queue was not full (a client waiting for more room than one TLP).
  void notify_space();
  // The class of the oldest TLP waiting to start, or -1 when none waits
  // (diagnosis of credit deadlocks; no simulated cost).
  int tx_oldest_class() const;
  class PcieLink& link() const { return *link_; }
  LinkPort& peer() const;            // the other end of the same link
  void set_observer(TlpObserver* o);  // sees every TLP this end transmits; null: none

 private:
  friend class PcieLink;
  LinkPort(PcieLink* link, int side, LinkEndKind kind, std::string name)
      : link_(link), side_(side), kind_(kind), name_(std::move(name)) {}
  PcieLink* link_;
  int side_;
  LinkEndKind kind_;
  std::string name_;
};

class PcieLink : public sc_core::sc_module {
 public:
  // Throws ConfigError (file "link", line 0) when both ends are the same kind.
  PcieLink(sc_core::sc_module_name name, const LinkConfig& config, LinkEndKind a_kind,
           LinkEndKind b_kind);
  ~PcieLink() override;
  LinkPort& end_a() { return *ends_[0]; }
  LinkPort& end_b() { return *ends_[1]; }
  // When the last TLP or DLLP now on either wire arrives (now, if none is):
  // an UpdateFC or Ack whose arrival changes nothing is not taken in as an
  // event, so the end of a run waits for this, when the link goes quiet.
  sc_core::sc_time quiet_at() const;
  const LinkConfig& config() const { return config_; }

 private:
  friend class LinkPort;
  struct Direction;
  void transmit(Direction& d);       // the wire is free: start a DLLP or a TLP
  void deliver(Direction& d);        // TLPs and DLLPs whose last byte arrived
  void credits_ready(Direction& d);  // freed buffers whose UpdateFC may go now
  void absorb_credits(Direction& x);  // UpdateFCs for x's transmitter that arrived by now
  // Whether the TLP `t`, starting now on d's wire, may arrive without an event.
  bool silent_arrival(const Direction& d, const Tlp& t) const;
  void take_in(Direction& d, TlpPtr tlp);  // a TLP's arrival at d's receiver
  int pick(const Direction& d) const;
  void release_at(int side, FcClass cls, uint32_t data_credits);
  LinkConfig config_;
  std::array<std::unique_ptr<LinkPort>, 2> ends_;
  std::array<std::unique_ptr<Direction>, 2> dirs_;  // dirs_[s]: transmitted by end s
};

// Splitting rules (pure functions, shared by every initiator and completer).
struct Span {
  uint64_t addr;
  uint32_t length;
};
// A write of `len` bytes at `addr` as MemWrite payloads of at most `mps`,
// never crossing a 4 KiB boundary.
std::vector<Span> split_write(uint64_t addr, uint64_t len, uint32_t mps);
// A read as MemRead requests of at most `mrrs`, never crossing 4 KiB.
std::vector<Span> split_read(uint64_t addr, uint64_t len, uint32_t mrrs);
// Completions answering one read request: each at most `max_cpl` bytes
// (a multiple of `rcb`), split only at multiples of `rcb` in the address.
std::vector<Span> split_completions(uint64_t addr, uint32_t len, uint32_t max_cpl, uint32_t rcb);

}  // namespace p2
