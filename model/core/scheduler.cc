// scheduler.cc - the model's timed activity (scheduler.h): a wheel of
// buckets (and a heap beyond it) for later instants, a list for the next
// round of this one, and the one SystemC method that runs them.
// sc_spawn: the Scheduler's method is created with the first Wakeup.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "core/scheduler.h"

#include <algorithm>
#include <cassert>

namespace p2 {

using sc_core::sc_time;

Scheduler& Scheduler::of_kernel() {
  static Scheduler* const kernel = new Scheduler();
  return *kernel;
}

Scheduler::Scheduler() {
  head_.fill(kNil);
  sc_core::sc_spawn_options opts;
  opts.spawn_method();
  opts.dont_initialize();
  opts.set_sensitivity(&tick_);
  sc_core::sc_spawn([this] { run(); }, "p2_scheduler", &opts);
}

void Scheduler::insert_later(const Entry& e) {
  const uint64_t bucket = e.at >> kBucketShift;
  // e.at is not before now, whose bucket is not before base_.
  if (bucket - base_ >= kBuckets) {
    far_.push_back(e);
    std::push_heap(far_.begin(), far_.end(), Later{});
    return;
  }
  uint32_t n = free_;
  if (n != kNil) {
    free_ = nodes_[n].next;
  } else {
    n = static_cast<uint32_t>(nodes_.size());
    nodes_.emplace_back();
  }
  const uint64_t slot = bucket & kMask;
  nodes_[n] = Node{e, head_[slot]};
  head_[slot] = n;
  mark(slot);
}

void Scheduler::schedule(Wakeup& w, uint64_t at, uint64_t now) {
  const Entry e{w.id_, at};
  if (at == now)
    soon_.push_back(e);
  else
    insert_later(e);
  if (!direct_ && at < armed_at_) arm();  // else tick_ fires no later already
}

void Scheduler::forget(const Wakeup& w) { wakeups_[w.id_ & kRankMask] = nullptr; }

uint64_t Scheduler::occupied_from(uint64_t slot) const {
  if (slot >= kBuckets) return kBuckets;
  const uint64_t word = slot >> 6;
  const uint64_t here = occupied_[word] & (~uint64_t{0} << (slot & 63));
  if (here) return word << 6 | static_cast<uint64_t>(__builtin_ctzll(here));
  const uint64_t later = word + 1 < 64 ? summary_ & (~uint64_t{0} << (word + 1)) : 0;
  if (!later) return kBuckets;
  const uint64_t next = static_cast<uint64_t>(__builtin_ctzll(later));
  return next << 6 | static_cast<uint64_t>(__builtin_ctzll(occupied_[next]));
}

uint64_t Scheduler::wheel_earliest() {
  // From base_'s slot on, the slots hold buckets base_, base_ + 1, ...,
  // wrapping around after the last slot.
  const uint64_t start = base_ & kMask;
  for (;;) {
    uint64_t slot = occupied_from(start);
    if (slot == kBuckets) slot = occupied_from(0);
    if (slot == kBuckets) return kNever;
    uint64_t first = kNever;
    for (uint32_t* link = &head_[slot]; *link != kNil;) {
      const uint32_t n = *link;
      if (live(nodes_[n].e)) {
        first = std::min(first, nodes_[n].e.at);
        link = &nodes_[n].next;
      } else {
        *link = nodes_[n].next;
        free_node(n);
      }
    }
    if (first != kNever) return first;
    unmark(slot);  // only void entries: look further
  }
}

void Scheduler::drop_void_far() {
  while (!far_.empty() && !live(far_.front())) {
    std::pop_heap(far_.begin(), far_.end(), Later{});
    far_.pop_back();
  }
}

uint64_t Scheduler::earliest_later() {
  drop_void_far();
  const uint64_t wheel = wheel_earliest();
  return far_.empty() ? wheel : std::min(wheel, far_.front().at);
}

void Scheduler::take_later(uint64_t now) {
  // Nothing is pending before now: the wheel may start at now's bucket.
  base_ = now >> kBucketShift;
  const uint64_t slot = base_ & kMask;
  for (uint32_t* link = &head_[slot]; *link != kNil;) {
    const uint32_t n = *link;
    const Entry e = nodes_[n].e;
    const bool is_live = live(e);
    if (is_live && e.at != now) {
      link = &nodes_[n].next;  // later in the same bucket
      continue;
    }
    if (is_live) take(e);
    *link = nodes_[n].next;
    free_node(n);
  }
  if (head_[slot] == kNil) unmark(slot);
  while (!far_.empty() && far_.front().at <= now) {
    if (live(far_.front())) take(far_.front());
    std::pop_heap(far_.begin(), far_.end(), Later{});
    far_.pop_back();
  }
}

void Scheduler::arm() {
  const uint64_t now = sim_time().value();
  const uint64_t due = !soon_.empty() ? now : earliest_later();
  if (due >= armed_at_) return;  // tick_ fires no later than that already
  assert(due >= now);
  // An earlier notification replaces tick_'s pending one (sc_event's rule).
  tick_.notify(ps(due - now));
  armed_at_ = due;
}

void Scheduler::run_instant(uint64_t now) {
  // The first round: what was due now; then what each round schedules for
  // now, until a round schedules nothing.
  round_.clear();
  take_later(now);
  for (;;) {
    // One round: every Wakeup due now, in id order; what they schedule for
    // now waits for the next round.
    for (const Entry& e : soon_)
      if (live(e)) take(e);
    soon_.clear();
    if (round_.empty()) return;
    if (round_.size() > 1)  // most rounds are one wake-up
      std::sort(round_.begin(), round_.end(),
                [](const Entry& a, const Entry& b) { return a.id < b.id; });
    // A wake-up destroyed by an earlier one of the round does not run.
    for (size_t i = 0; i < round_.size(); ++i)
      if (Wakeup* w = of(round_[i])) w->fire_();
    round_.clear();
  }
}

void Scheduler::run() {
  if (direct_) return;  // a tick armed before the switch
  armed_at_ = kNever;
  run_instant(sim_time().value());
  arm();
}

void Scheduler::drive_directly() {
  if (direct_) return;
  set_clock(sc_core::sc_time_stamp().value());
  direct_ = true;
  direct_clock_ = &clock_;
}

uint64_t Scheduler::next_due() {
  for (const Entry& e : soon_)
    if (live(e)) return clock_ps_;
  soon_.clear();
  return earliest_later();
}

bool Scheduler::run_through(uint64_t last) {
  assert(direct_);
  pause_ = false;
  for (;;) {
    const uint64_t t = next_due();
    if (t == kNever || t > last) break;
    set_clock(t);
    run_instant(t);
    if (pause_) {
      pause_ = false;
      return false;
    }
  }
  if (last != kNever && last > clock_ps_) set_clock(last);
  return true;
}

// ---- Wakeup -------------------------------------------------------------------

Wakeup::Wakeup(Kind kind, std::function<void()> fire)
    : fire_(std::move(fire)),
      scheduler_(Scheduler::of_kernel()),
      id_(static_cast<uint32_t>(kind) << 31 | scheduler_.enrol(this)) {}

Wakeup::~Wakeup() { scheduler_.forget(*this); }

void Wakeup::cancel() { at_ = kIdle; }

}  // namespace p2
