// link.cc - the PCIe link: serialisation, flow-control credits, ordering,
// UpdateFC and Ack DLLPs. See model/pcie/README.md for what happens to each
// TLP and DLLP.
#include "pcie/link.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <stdexcept>

#include "core/scheduler.h"
#include "pcie/ring.h"

namespace p2 {

using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

const char* link_end_kind_name(LinkEndKind k) {
  switch (k) {
    case LinkEndKind::RootComplex:
      return "Root Complex";
    case LinkEndKind::Endpoint:
      return "Endpoint";
  }
  return "?";
}

LinkConfig::LinkConfig(const Params& p)
    : lanes(p.pcie_lanes),
      gtps(p.pcie_gtps),
      encoding(p.pcie_encoding),
      tlp_framing_bytes(static_cast<uint32_t>(p.tlp_framing_bytes)),
      dllp_bytes(static_cast<uint32_t>(p.dllp_bytes)),
      ack_coalesce_tlps(static_cast<uint32_t>(p.ack_coalesce_tlps)),
      latency(p.link_latency_ns + p.cable_m * p.cable_ns_per_m, SC_NS),
      fc_update_latency(p.fc_update_latency_ns, SC_NS),
      posted_hdr_credits(static_cast<uint32_t>(p.rx_posted_hdr_credits)),
      posted_data_credits(static_cast<uint32_t>(p.rx_posted_data_credits)),
      nonposted_hdr_credits(static_cast<uint32_t>(p.rx_nonposted_hdr_credits)),
      cpl_hdr_credits(static_cast<uint32_t>(p.rx_cpl_hdr_credits)),
      cpl_data_credits(static_cast<uint32_t>(p.rx_cpl_data_credits)),
      max_payload(static_cast<uint32_t>(p.max_payload_bytes)),
      max_read_request(static_cast<uint32_t>(p.max_read_request_bytes)),
      read_completion_boundary(static_cast<uint32_t>(p.read_completion_boundary)) {}

sc_time LinkConfig::wire_time(uint32_t bytes) const {
  return sc_time(bytes / bytes_per_ns(), SC_NS);
}

namespace {

constexpr uint64_t kNoSeq = std::numeric_limits<uint64_t>::max();

// One flow-control counter as the transmitter sees it: room left at the receiver.
struct Credit {
  bool infinite = true;
  uint32_t avail = 0;
  explicit Credit(uint32_t advertised = 0) : infinite(advertised == 0), avail(advertised) {}
  bool covers(uint32_t need) const { return infinite || avail >= need; }
  void take(uint32_t n) {
    if (!infinite) avail -= n;
  }
  void give(uint32_t n) {
    if (!infinite) avail += n;
  }
};

enum class Dllp : uint8_t { None, UpdateFc, Ack };

}  // namespace

// One direction of the link: the wire from end `tx` to end `rx`, the
// transmitter's queues and credit view at `tx`, the receive buffer at `rx`,
// and the DLLPs that `tx` owes the reverse direction (they share this wire).
struct PcieLink::Direction {
  Direction(int tx_side, const LinkConfig& c) : tx(tx_side), rx(1 - tx_side) {
    credits[static_cast<int>(FcClass::Posted)] = {Credit(c.posted_hdr_credits),
                                                  Credit(c.posted_data_credits)};
    // Reads carry no data: non-posted data credits never run out.
    credits[static_cast<int>(FcClass::NonPosted)] = {Credit(c.nonposted_hdr_credits), Credit(0)};
    credits[static_cast<int>(FcClass::Completion)] = {Credit(c.cpl_hdr_credits),
                                                      Credit(c.cpl_data_credits)};
    // Every TLP and DLLP size this link can carry, so the hot path does no
    // floating-point time conversion.
    const uint32_t largest =
        std::max(c.dllp_bytes, c.tlp_framing_bytes + 4 * kDwordBytes + c.max_payload);
    wire_of.reserve(largest + 1);
    for (uint32_t b = 0; b <= largest; ++b) wire_of.push_back(c.wire_time(b));
  }

  struct Queued {
    uint64_t seq = 0;  // send order across classes, for the ordering rules
    TlpPtr tlp;
  };
  struct ClassCredits {
    Credit hdr, data;
  };
  struct FcOwed {  // credits freed at `tx`'s receive buffer, not yet sent back
    bool waiting = false;
    uint32_t hdr = 0, data = 0;
  };
  struct Release {  // a freed buffer whose UpdateFC becomes ready at `ready`
    sc_time ready;
    FcClass cls = FcClass::Posted;
    uint32_t data = 0;
  };
  struct InFlight {  // a TLP or DLLP on the wire, arriving at `rx` at `at`
    sc_time at;
    TlpPtr tlp;  // null for a DLLP
    Dllp dllp = Dllp::None;
    FcClass cls = FcClass::Posted;
    uint32_t hdr = 0, data = 0;
    bool silent = false;  // a TLP taken in with the next one (silent_arrival)
  };

  const int tx, rx;

  // Transmitter at `tx`.
  LinkClient* client = nullptr;  // the client of end `tx` (it also receives the reverse direction)
  TlpObserver* observer = nullptr;
  size_t capacity = 0;  // 0: unbounded
  bool was_full = false;
  std::array<Ring<Queued>, kFcClasses> queue;
  size_t queued = 0;
  uint64_t next_seq = 0;
  std::array<ClassCredits, kFcClasses> credits;

  // The wire.
  sc_time busy_until;
  Wakeup kick{Wakeup::Kind::Decision};       // something may be startable now (zero delays)
  Wakeup wire_free{Wakeup::Kind::Decision};  // the current transmission ends
  bool stalled = false;
  sc_time stall_since;
  Ring<InFlight> flight;
  uint64_t sent_tlps = 0;  // TLPs put on the wire: the n-th is the n-th to arrive
  bool silent_rx = false;  // rx's client answers arrival_is_silent
  Wakeup arrive;  // the head of `flight` reaches `rx`
  LinkDirStats stats;
  std::vector<sc_time> wire_of;  // wire_of[n]: serialisation of n line bytes

  // DLLPs owed to the reverse direction.
  Ring<Release> releases;
  Wakeup release_ready;  // the head of `releases` may now be sent back
  std::array<FcOwed, kFcClasses> fc_owed;
  uint32_t acks_owed = 0;

  // Receive buffer at `rx`: what its client holds, to catch double releases.
  std::array<uint64_t, kFcClasses> held_hdr{}, held_data{};
  uint64_t received = 0;

  bool wire_idle() const { return sim_time() >= busy_until; }
  // Puts one TLP or DLLP of `bytes` line bytes on the wire, starting now
  // (`back`: the reverse direction's transmitter, which UpdateFCs feed).
  // Always inline: once per TLP and DLLP on every wire, and a call costs the
  // hot path more than its body's size is worth.
  [[gnu::always_inline]] void occupy(const LinkConfig& cfg, uint32_t bytes, InFlight&& item,
                                     const Direction& back) {
    const sc_time now = sim_time();
    if (stalled) {
      stats.credit_stall += now - stall_since;
      stalled = false;
    }
    const sc_time ser = bytes < wire_of.size() ? wire_of[bytes] : cfg.wire_time(bytes);
    stats.wire_bytes += bytes;
    stats.busy += ser;
    busy_until = now + ser;
    item.at = busy_until + cfg.latency;
    if (needs_arrival(item, back)) arrive.notify(item.at - now);  // a pending earlier one wins
    flight.push_back(std::move(item));
  }
  // Something may be startable: now if the wire is idle, else when it frees.
  void wake() {
    const sc_time now = sim_time();
    if (now >= busy_until)
      kick.notify(SC_ZERO_TIME);
    else
      wire_free.notify(busy_until - now);
  }
  // Whether `item`, on this wire, must be taken in at its arrival time: a
  // TLP unless its arrival is silent (PcieLink::silent_arrival); an UpdateFC
  // only while the transmitter it gives credits to (`back`, our receiver's)
  // has a TLP waiting. Otherwise its credits are taken in by the next
  // arrival behind it, or by that transmitter itself before it next looks at
  // its credits (absorb_credits), at the same simulated time as they would
  // have been. An Ack changes nothing.
  static bool needs_arrival(const InFlight& item, const Direction& back) {
    return (item.tlp && !item.silent) || (item.dllp == Dllp::UpdateFc && back.queued > 0);
  }
  // Keeps `arrive` at the first item that needs its arrival seen.
  void arm_arrival(const Direction& back) {
    const sc_time now = sim_time();
    for (size_t i = 0; i < flight.size(); ++i) {
      const InFlight& item = flight[i];
      if (needs_arrival(item, back)) {
        arrive.notify(item.at > now ? item.at - now : SC_ZERO_TIME);
        return;
      }
    }
  }
  // After starting a transmission: the wire's end wakes the transmitter only
  // if something is left to send (what comes later calls wake()).
  void more_after_this() {
    bool owed = acks_owed > 0 || queued > 0;
    for (const FcOwed& o : fc_owed) owed = owed || o.waiting;
    if (owed) wire_free.notify(busy_until - sim_time());
  }
};

PcieLink::PcieLink(sc_core::sc_module_name name, const LinkConfig& config, LinkEndKind a_kind,
                   LinkEndKind b_kind)
    : sc_module(name), config_(config) {
  const std::string me = this->name();
  if (a_kind == b_kind)
    throw ConfigError("link", 0,
                      me + ": a link must join a Root Complex to an Endpoint, not " +
                          link_end_kind_name(a_kind) + " to " + link_end_kind_name(b_kind));
  if (!(config_.bytes_per_ns() > 0))
    throw ConfigError("link", 0, me + ": lanes, transfer rate and encoding must be positive");
  // A TLP needing more data credits than advertised could never be sent.
  auto check_data = [&](uint32_t credits, const char* what) {
    if (credits != 0 && credits * kCreditDataBytes < config_.max_payload)
      throw ConfigError("link", 0,
                        me + ": " + what + " data credits (" + std::to_string(credits) +
                            ") cannot hold one max_payload_bytes TLP (" +
                            std::to_string(config_.max_payload) + " bytes)");
  };
  check_data(config_.posted_data_credits, "posted");
  check_data(config_.cpl_data_credits, "completion");

  // LinkPort's constructor is private to us, out of make_unique's reach.
  ends_[0].reset(new LinkPort(this, 0, a_kind, me + ".a"));
  ends_[1].reset(new LinkPort(this, 1, b_kind, me + ".b"));
  for (int s = 0; s < 2; ++s) {
    dirs_[s] = std::make_unique<Direction>(s, config_);
    Direction* d = dirs_[s].get();
    d->kick.bind([this, d] { transmit(*d); });
    d->wire_free.bind([this, d] { transmit(*d); });
    d->arrive.bind([this, d] { deliver(*d); });
    d->release_ready.bind([this, d] { credits_ready(*d); });
  }
}

PcieLink::~PcieLink() = default;

// Picks the class whose head TLP may start now, or -1. Among the heads that
// have credits and that the ordering rules let go, the oldest goes first.
int PcieLink::pick(const Direction& d) const {
  constexpr int P = static_cast<int>(FcClass::Posted);
  constexpr int NP = static_cast<int>(FcClass::NonPosted);
  constexpr int C = static_cast<int>(FcClass::Completion);
  std::array<uint64_t, kFcClasses> seq;
  for (int c = 0; c < kFcClasses; ++c)
    seq[c] = d.queue[c].empty() ? kNoSeq : d.queue[c].front().seq;
  auto fits = [&](int c) {
    const Tlp& t = *d.queue[c].front().tlp;
    return d.credits[c].hdr.covers(1) && d.credits[c].data.covers(t.data_credits());
  };
  int best = -1;
  auto consider = [&](int c) {
    if (fits(c) && (best < 0 || seq[c] < seq[best])) best = c;
  };
  // Posted may pass anything; nothing passes an older posted; completions may
  // pass non-posted; non-posted passes nothing.
  if (seq[P] != kNoSeq) consider(P);
  if (seq[C] != kNoSeq && seq[C] < seq[P]) consider(C);
  if (seq[NP] != kNoSeq && seq[NP] < seq[P] && seq[NP] < seq[C]) consider(NP);
  return best;
}

void PcieLink::transmit(Direction& d) {
  if (!d.wire_idle()) return;
  // DLLPs go between TLPs, ahead of waiting TLPs; credit returns first since
  // they unblock the other direction.
  for (int c = 0; c < kFcClasses; ++c) {
    Direction::FcOwed& owed = d.fc_owed[c];
    if (!owed.waiting) continue;
    Direction::InFlight item;
    item.dllp = Dllp::UpdateFc;
    item.cls = static_cast<FcClass>(c);
    item.hdr = owed.hdr;
    item.data = owed.data;
    owed = Direction::FcOwed{};
    ++d.stats.dllps;
    d.occupy(config_, config_.dllp_bytes, std::move(item), *dirs_[d.rx]);
    d.more_after_this();
    return;
  }
  if (d.acks_owed > 0) {
    --d.acks_owed;
    Direction::InFlight item;
    item.dllp = Dllp::Ack;
    ++d.stats.dllps;
    d.occupy(config_, config_.dllp_bytes, std::move(item), *dirs_[d.rx]);
    d.more_after_this();
    return;
  }
  if (d.queued == 0) return;
  absorb_credits(d);
  const int c = pick(d);
  if (c < 0) {
    if (!d.stalled) {
      d.stalled = true;
      d.stall_since = sim_time();
    }
    return;
  }
  Direction::InFlight item;
  item.tlp = d.queue[c].pop_front().tlp;
  --d.queued;
  const Tlp& t = *item.tlp;
  d.credits[c].hdr.take(1);
  d.credits[c].data.take(t.data_credits());
  ++d.sent_tlps;
  item.silent = d.silent_rx && silent_arrival(d, t);
  const uint32_t bytes = config_.tlp_wire_bytes(t);
  ++d.stats.tlps;
  d.stats.payload_bytes += t.payload_bytes();
  const sc_time start = sim_time();
  const Tlp* sent = item.tlp.get();  // stays alive: the in-flight ring owns it
  d.occupy(config_, bytes, std::move(item), *dirs_[d.rx]);
  if (d.observer) d.observer->on_tlp_sent(*ends_[d.tx], *sent, start, d.busy_until);
  d.more_after_this();
  if (d.was_full && (d.capacity == 0 || d.queued < d.capacity)) {
    d.was_full = false;
    if (d.client) d.client->tx_space(*ends_[d.tx]);
  }
}

// Always inline: once per TLP arrival.
[[gnu::always_inline]] inline void PcieLink::take_in(Direction& d, TlpPtr tlp) {
  Direction& back = *dirs_[d.rx];
  const int c = static_cast<int>(tlp->fc_class());
  ++d.held_hdr[c];
  d.held_data[c] += tlp->data_credits();
  ++d.received;
  if (config_.ack_coalesce_tlps != 0 && d.received % config_.ack_coalesce_tlps == 0) {
    ++back.acks_owed;
    back.wake();
  }
  LinkClient* receiver = back.client;
  if (!receiver)
    throw std::logic_error(ends_[d.rx]->name() + ": a TLP arrived at a link end with no client");
  receiver->tlp_arrived(*ends_[d.rx], std::move(tlp));
}

void PcieLink::deliver(Direction& d) {
  const sc_time now = sim_time();
  Direction& back = *dirs_[d.rx];  // the reverse wire, transmitted by our receiver
  while (!d.flight.empty() && d.flight.front().at <= now) {
    Direction::InFlight item = d.flight.pop_front();
    if (!item.tlp) {
      if (item.dllp == Dllp::UpdateFc) {
        // Credits for the reverse direction, whose transmitter is our receiver.
        Direction::ClassCredits& cr = back.credits[static_cast<int>(item.cls)];
        cr.hdr.give(item.hdr);
        cr.data.give(item.data);
        // Only a TLP waiting to start needs credits (owed DLLPs have their
        // own wake-up).
        if (back.queued > 0) back.wake();
      }
      continue;
    }
    take_in(d, std::move(item.tlp));
  }
  d.arm_arrival(back);
}

// The receiver's word (LinkClient::arrival_is_silent), and the link's own
// conditions: releasing the TLP sends no UpdateFC (its class is infinite at
// the receiver both ways) and its arrival owes no Ack.
bool PcieLink::silent_arrival(const Direction& d, const Tlp& t) const {
  const Direction::ClassCredits& cr = d.credits[static_cast<int>(t.fc_class())];
  if (!cr.hdr.infinite || !cr.data.infinite) return false;
  if (config_.ack_coalesce_tlps != 0 && d.sent_tlps % config_.ack_coalesce_tlps == 0) return false;
  const LinkClient* receiver = dirs_[d.rx]->client;
  return receiver && receiver->arrival_is_silent(*ends_[d.rx], t);
}

void PcieLink::absorb_credits(Direction& x) {
  // x's credits come back on the reverse wire; those that reached x by now
  // and that no arrival took in yet (Direction::needs_arrival) count now. A
  // TLP ahead of them that arrived by now arrived silently: it is taken in
  // first, in order.
  Direction& in = *dirs_[x.rx];
  const sc_time now = sim_time();
  while (!in.flight.empty() && (!in.flight.front().tlp || in.flight.front().silent) &&
         in.flight.front().at <= now) {
    Direction::InFlight item = in.flight.pop_front();
    if (item.tlp) {
      take_in(in, std::move(item.tlp));
      continue;
    }
    if (item.dllp != Dllp::UpdateFc) continue;
    Direction::ClassCredits& cr = x.credits[static_cast<int>(item.cls)];
    cr.hdr.give(item.hdr);
    cr.data.give(item.data);
  }
}

void PcieLink::credits_ready(Direction& d) {
  const sc_time now = sim_time();
  bool any = false;
  while (!d.releases.empty() && d.releases.front().ready <= now) {
    Direction::Release r = d.releases.pop_front();
    Direction::FcOwed& owed = d.fc_owed[static_cast<int>(r.cls)];
    owed.waiting = true;  // folds into an UpdateFC already waiting for the wire
    owed.hdr += 1;
    owed.data += r.data;
    any = true;
  }
  if (any) d.wake();
  if (!d.releases.empty()) d.release_ready.notify(d.releases.front().ready - now);
}

void PcieLink::release_at(int side, FcClass cls, uint32_t data_credits) {
  const int c = static_cast<int>(cls);
  Direction& in = *dirs_[1 - side];  // the direction this end receives
  if (in.held_hdr[c] == 0 || in.held_data[c] < data_credits)
    throw std::logic_error(ends_[side]->name() +
                           ": release of a TLP the receive buffer does not hold");
  --in.held_hdr[c];
  in.held_data[c] -= data_credits;
  // Classes advertised as infinite on both counters never send UpdateFCs.
  const Direction::ClassCredits& cr = in.credits[c];
  if (cr.hdr.infinite && cr.data.infinite) return;
  Direction& out = *dirs_[side];
  Direction::Release r;
  r.ready = sim_time() + config_.fc_update_latency;
  r.cls = cls;
  r.data = cr.data.infinite ? 0 : data_credits;
  if (out.releases.empty()) out.release_ready.notify(config_.fc_update_latency);
  out.releases.push_back(std::move(r));
}

sc_time PcieLink::quiet_at() const {
  sc_time quiet = sim_time();
  for (const auto& d : dirs_)
    if (!d->flight.empty()) quiet = std::max(quiet, d->flight[d->flight.size() - 1].at);
  return quiet;
}

// ---- LinkPort ---------------------------------------------------------------

void LinkPort::attach(LinkClient* client, size_t tx_capacity) {
  PcieLink::Direction& d = *link_->dirs_[side_];
  d.client = client;
  d.capacity = tx_capacity;
}

void LinkPort::allow_silent_arrivals() { link_->dirs_[1 - side_]->silent_rx = true; }

bool LinkPort::can_send() const {
  const PcieLink::Direction& d = *link_->dirs_[side_];
  return d.capacity == 0 || d.queued < d.capacity;
}

void LinkPort::send(TlpPtr tlp) {
  PcieLink::Direction& d = *link_->dirs_[side_];
  const LinkConfig& cfg = link_->config_;
  if (!can_send()) throw std::logic_error(name_ + ": send() with a full transmit queue");
  if (tlp->kind == TlpKind::MemRead ? tlp->length > cfg.max_read_request
                                    : tlp->length > cfg.max_payload)
    throw std::invalid_argument(name_ + ": TLP of " + std::to_string(tlp->length) +
                                " bytes exceeds the link's max payload or read request size");
  const int c = static_cast<int>(tlp->fc_class());
  d.queue[c].push_back(PcieLink::Direction::Queued{d.next_seq++, std::move(tlp)});
  // From now on the credits coming back to this transmitter matter when they
  // arrive (Direction::needs_arrival).
  if (d.queued++ == 0) link_->dirs_[d.rx]->arm_arrival(d);
  if (d.capacity != 0 && d.queued >= d.capacity) d.was_full = true;
  d.wake();
}

void LinkPort::release(const Tlp& tlp) {
  link_->release_at(side_, tlp.fc_class(), tlp.data_credits());
}

void LinkPort::release(FcClass cls, uint32_t payload_bytes) {
  link_->release_at(side_, cls, (payload_bytes + kCreditDataBytes - 1) / kCreditDataBytes);
}

const LinkDirStats& LinkPort::tx_stats() const {
  // A stall still going on counts up to now, so end-of-run figures see it.
  PcieLink::Direction& d = *link_->dirs_[side_];
  if (d.stalled) {
    const sc_time now = sim_time();
    d.stats.credit_stall += now - d.stall_since;
    d.stall_since = now;
  }
  return d.stats;
}

size_t LinkPort::tx_queued() const { return link_->dirs_[side_]->queued; }

void LinkPort::notify_space() { link_->dirs_[side_]->was_full = true; }

int LinkPort::tx_oldest_class() const {
  const PcieLink::Direction& d = *link_->dirs_[side_];
  int best = -1;
  for (int c = 0; c < kFcClasses; ++c)
    if (!d.queue[c].empty() && (best < 0 || d.queue[c].front().seq < d.queue[best].front().seq))
      best = c;
  return best;
}

void LinkPort::set_observer(TlpObserver* o) { link_->dirs_[side_]->observer = o; }

LinkPort& LinkPort::peer() const { return *link_->ends_[1 - side_]; }

// ---- Splitting rules ----------------------------------------------------------

namespace {

std::vector<Span> split_request(uint64_t addr, uint64_t len, uint32_t max, const char* what) {
  if (max == 0) throw std::invalid_argument(std::string(what) + ": size limit must be positive");
  std::vector<Span> out;
  out.reserve(len / max + 2);
  while (len > 0) {
    const uint64_t to_boundary = bytes_to_request_boundary(addr);
    const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>({len, max, to_boundary}));
    out.push_back({addr, n});
    addr += n;
    len -= n;
  }
  return out;
}

}  // namespace

std::vector<Span> split_write(uint64_t addr, uint64_t len, uint32_t mps) {
  return split_request(addr, len, mps, "split_write");
}

std::vector<Span> split_read(uint64_t addr, uint64_t len, uint32_t mrrs) {
  return split_request(addr, len, mrrs, "split_read");
}

std::vector<Span> split_completions(uint64_t addr, uint32_t len, uint32_t max_cpl, uint32_t rcb) {
  if (rcb == 0 || max_cpl == 0 || max_cpl % rcb != 0)
    throw std::invalid_argument("split_completions: max_cpl must be a positive multiple of rcb");
  std::vector<Span> out;
  out.reserve(len / max_cpl + 2);
  const uint64_t end = addr + len;
  while (addr < end) {
    // Every completion but the last ends on an RCB boundary, so the first may
    // be short and the rest start aligned; each as large as max_cpl allows.
    const uint64_t aligned_end = (addr + max_cpl) / rcb * rcb;
    const uint64_t stop = std::min(end, aligned_end);
    out.push_back({addr, static_cast<uint32_t>(stop - addr)});
    addr = stop;
  }
  return out;
}

}  // namespace p2
