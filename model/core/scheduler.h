// scheduler.h - the model's timed activity, run in one deterministic order.
//
// Every unit's timed activity (a wire coming free, a TLP's last byte
// arriving, a router's next clock edge, a pipeline's head coming due) is a
// Wakeup: a callback of the unit, its kind (an arrival or a decision, below)
// and at most one pending time. One Scheduler per SystemC kernel keeps them
// all in (time, id) order (a wheel of buckets for the next microsecond, a
// heap beyond: Scheduler's private part), where a Wakeup's id is its kind, then
// its rank in construction order (the topology builds units in a fixed
// order), and is itself one SystemC method, whose timed event is kept at the
// earliest pending Wakeup (or, in p2sim, is driven directly: below). When it
// fires at time t the method runs the instant in rounds, as SystemC's delta
// cycles would: each round takes every Wakeup due at t, in id order (every
// arrival, then every decision), and calls each; what those schedule for t
// itself (a zero delay) goes to the next round. It returns when nothing more
// is due at t, and the kernel moves on (or pauses, sim/frontend.h).
//
// Why not one SystemC process per unit on SystemC's timed events: its timed
// queue is a heap that releases equal-time notifications in whatever order
// its structure holds them, and that structure depends on every notification
// ever made, cancelled ones included. So which of two TLPs reaching a
// crossbar in the same instant went first depended on how many idle wake-ups
// other units had scheduled earlier: removing a wake-up that did nothing
// moved simulated figures. Here the order of same-instant activity is a
// function of the model's state alone, so a wake-up whose callback does
// nothing can be added or removed without moving any figure. It is also
// cheaper per activation: an entry and a call (about 150 instructions),
// where SystemC allocates a timed notification, heaps it with a compare
// through a function pointer, triggers the event and dispatches the process
// (about 550).
//
// A Wakeup keeps sc_event's rule: at most one pending time, the earliest
// wins. A zero delay means the next round of this instant. A Wakeup already
// taken into the current round still runs in it if it is notified or
// cancelled meanwhile (as a process already triggered in a delta cycle
// does).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include <systemc>

namespace p2 {

class Scheduler;

// A time of `v` picoseconds (the resolution the model fixes before it builds
// anything), made inline: sc_time::from_value is a call into the library that
// checks the resolution every time, and the model makes a time per instant
// and several per TLP hop. sc_time's one member is its value.
inline sc_core::sc_time ps(uint64_t v) {
  static_assert(sizeof(sc_core::sc_time) == sizeof(uint64_t), "sc_time is its value alone");
  sc_core::sc_time t;
  std::memcpy(static_cast<void*>(&t), &v, sizeof v);
  return t;
}

// The model's current time (ps resolution): SystemC's, or the Scheduler's
// own while it is driven directly. Read inline: sc_time_stamp() is a call
// into the library, and the model asks for the time several times per TLP
// hop.
inline const sc_core::sc_time& sim_time();

class Wakeup {
 public:
  // What a wake-up does at its instant: take in what arrived (a TLP's last
  // byte, freed credits, a pipeline's head coming due), or decide what to
  // start from all that (a wire's next transmission, a crossbar's
  // arbitration, a DMA engine's next request). In a round every arrival runs
  // before any decision, as registered logic sees all of a clock edge's
  // inputs: a decision never depends on which of two same-instant arrivals
  // its unit happened to be told of first.
  enum class Kind : uint32_t { Arrival = 0, Decision = 1 };
  // `fire`: what the unit does when the wake-up is due (bind() sets it
  // later, for a member whose owner is not constructed yet).
  explicit Wakeup(Kind kind = Kind::Arrival, std::function<void()> fire = {});
  ~Wakeup();
  Wakeup(const Wakeup&) = delete;
  Wakeup& operator=(const Wakeup&) = delete;

  // Fires `delay` from now (zero: the next round of this instant) unless an
  // earlier time is pending; replaces a later one. Inline (below): nearly
  // half the calls find an earlier time pending and return at once.
  inline void notify(const sc_core::sc_time& delay);
  void cancel();
  void bind(std::function<void()> fire) { fire_ = std::move(fire); }

 private:
  friend class Scheduler;
  static constexpr uint64_t kIdle = UINT64_MAX;
  std::function<void()> fire_;
  Scheduler& scheduler_;
  uint64_t at_ = kIdle;  // the pending time (ps)
  uint32_t id_;  // its kind in the top bit, then its rank in construction order
};

class Scheduler {
 public:
  // The kernel's scheduler, created with the first Wakeup (SystemC's kernel is
  // one per process, and so is this; never destroyed, as the kernel is not).
  static Scheduler& of_kernel();

  // Direct drive, for a program in which this is the only SystemC process
  // (p2sim: every unit's activity is a Wakeup): once SystemC has started (an
  // sc_start of zero time), the program advances the model with
  // run_through(), and SystemC's kernel stands still. An instant then costs
  // its rounds alone, not also a pass of SystemC's evaluate, update and
  // time-advance phases: a quarter of the simulator's instructions on a
  // collective loop. The same instants run in the same rounds and order
  // either way.
  void drive_directly();
  static constexpr uint64_t kNever = UINT64_MAX;
  // Directly driven: the earliest instant with something due (the current
  // one if a round is waiting), or kNever.
  uint64_t next_due();
  // Directly driven: runs every instant up to and including `last` and
  // stands at `last`; or stops at the end of an instant in which pause() was
  // called, stands there and returns false.
  bool run_through(uint64_t last);
  void pause() { pause_ = true; }

 private:
  friend class Wakeup;
  // An entry stands for its Wakeup (wakeups_[its id's rank]) while that is
  // pending at the entry's time; a Wakeup rescheduled or cancelled leaves its
  // old entry behind, void (dropped when it surfaces), which is cheaper than
  // finding and removing it. Two entries live at once (a Wakeup cancelled and
  // notified again for the same time) are one: the first taken into a round
  // marks its Wakeup idle, which voids the other. Sixteen bytes, compared as
  // one 128-bit key, time then id: the heap's sifts branch on one compare.
  struct Entry {
    uint64_t id;  // low half of the key
    uint64_t at;  // high half
    unsigned __int128 key() const { return static_cast<unsigned __int128>(at) << 64 | id; }
  };
  struct Later {  // heap order: the earliest (time, id) on top
    bool operator()(const Entry& a, const Entry& b) const { return a.key() > b.key(); }
  };
  static constexpr uint32_t kRankMask = 0x7fffffff;  // id without its kind bit
  Wakeup* of(const Entry& e) const { return wakeups_[e.id & kRankMask]; }
  bool live(const Entry& e) const {
    const Wakeup* w = of(e);
    return w && w->at_ == e.at;
  }
  // Into the round being gathered: its Wakeup is idle from now on (a notify
  // while the round runs schedules it anew), so a twin entry is void.
  void take(const Entry& e) {
    round_.push_back(e);
    of(e)->at_ = Wakeup::kIdle;
  }

  Scheduler();
  uint32_t enrol(Wakeup* w) {
    wakeups_.push_back(w);
    return static_cast<uint32_t>(wakeups_.size() - 1);
  }
  // w.at_ just set to `at`.
  void schedule(Wakeup& w, uint64_t at, uint64_t now);
  void forget(const Wakeup& w);  // w is being destroyed: its entries are void
  void run();  // the method: runs the instant's rounds, then re-arms
  void run_instant(uint64_t now);  // every round of the instant `now`
  void set_clock(uint64_t t) {
    clock_ps_ = t;
    clock_ = ps(t);
  }
  void arm();  // keeps tick_ at the earliest pending Wakeup

  // Later instants. Nearly every wake-up is due within a microsecond (a
  // wire's serialisation and latency, a clock edge, a credit return), so
  // those go to a wheel of kBuckets buckets of 2^kBucketShift ps each, from
  // the current instant's on: a bucket is a list of pooled nodes, putting an
  // entry in is a push on its list, and the earliest is found through two
  // levels of occupancy bits and a walk of one short list. Anything later
  // waits in a heap. (A binary heap of every entry, about 165 of them on a
  // 16-node job, was a quarter to a third of the simulator's instructions.)
  // Host-speed constants, not model parameters: they change no figure.
  static constexpr unsigned kBucketShift = 8;  // 256 ps per bucket
  static constexpr uint64_t kBuckets = 4096;   // 1.05 us ahead
  static constexpr uint64_t kMask = kBuckets - 1;
  static constexpr uint32_t kNil = UINT32_MAX;
  struct Node {
    Entry e;
    uint32_t next;
  };
  void insert_later(const Entry& e);
  // The earliest live later entry's time, or kNever; drops void entries
  // from what it looks at.
  uint64_t earliest_later();
  // Takes every live entry due at `now` into round_ (the first round).
  void take_later(uint64_t now);
  uint64_t wheel_earliest();
  uint64_t occupied_from(uint64_t slot) const;  // first occupied slot >= slot, or kBuckets
  void mark(uint64_t slot) {
    occupied_[slot >> 6] |= uint64_t{1} << (slot & 63);
    summary_ |= uint64_t{1} << (slot >> 6);
  }
  void unmark(uint64_t slot) {
    occupied_[slot >> 6] &= ~(uint64_t{1} << (slot & 63));
    if (!occupied_[slot >> 6]) summary_ &= ~(uint64_t{1} << (slot >> 6));
  }
  void free_node(uint32_t n) {
    nodes_[n].next = free_;
    free_ = n;
  }
  void drop_void_far();  // pops void entries off far_ until a live one (or none) is on top

  friend const sc_core::sc_time& sim_time();
  // While driven directly, the clock sim_time() reads; null before (it reads
  // SystemC's). Set once, like SystemC's own pointer to its kernel.
  static inline const sc_core::sc_time* direct_clock_ = nullptr;
  sc_core::sc_time clock_;
  uint64_t clock_ps_ = 0;
  bool direct_ = false, pause_ = false;
  std::vector<Wakeup*> wakeups_;  // by rank; null once destroyed
  std::vector<Node> nodes_;   // the wheel's entries, and free nodes
  uint32_t free_ = kNil;      // the free nodes' list
  std::array<uint32_t, kBuckets> head_;  // each slot's list
  std::array<uint64_t, kBuckets / 64> occupied_{};  // a bit per slot with a list
  uint64_t summary_ = 0;      // a bit per nonzero word of occupied_
  uint64_t base_ = 0;         // the current instant's bucket: no wheel entry is earlier
  std::vector<Entry> far_;    // wake-ups beyond the wheel when scheduled: a heap
  std::vector<Entry> soon_;   // wake-ups for now: the next round, in notify order
  std::vector<Entry> round_;  // the round being run, in id order
  uint64_t armed_at_ = kNever;  // when tick_ fires, kNever: not armed
  sc_core::sc_event tick_;
};

inline const sc_core::sc_time& sim_time() {
  const sc_core::sc_time* direct = Scheduler::direct_clock_;
  return direct ? *direct : sc_core::sc_get_curr_simcontext()->time_stamp();
}

inline void Wakeup::notify(const sc_core::sc_time& delay) {
  const uint64_t now = sim_time().value();
  const uint64_t at = now + delay.value();
  if (at_ <= at) return;  // the earliest wins (kIdle: nothing pending)
  at_ = at;
  scheduler_.schedule(*this, at, now);
}

}  // namespace p2
