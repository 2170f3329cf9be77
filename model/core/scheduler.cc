// scheduler.cc - the model's timed activity (scheduler.h): a heap of
// (time, id) entries for later instants, a list for the next round of this
// one, and the one SystemC method that runs them.
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
  sc_core::sc_spawn_options opts;
  opts.spawn_method();
  opts.dont_initialize();
  opts.set_sensitivity(&tick_);
  sc_core::sc_spawn([this] { run(); }, "p2_scheduler", &opts);
}

void Scheduler::schedule(Wakeup& w, uint64_t at, uint64_t now) {
  const Entry e{w.id_, at};
  if (at == now) {
    soon_.push_back(e);
  } else {
    heap_.push_back(e);
    std::push_heap(heap_.begin(), heap_.end(), Later{});
  }
  if (!direct_ && at < armed_at_) arm();  // else tick_ fires no later already
}

void Scheduler::forget(const Wakeup& w) { wakeups_[w.id_ & kRankMask] = nullptr; }

void Scheduler::drop_void_top() {
  while (!heap_.empty() && !live(heap_.front())) {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    heap_.pop_back();
  }
}

void Scheduler::arm() {
  drop_void_top();
  const uint64_t now = sim_time().value();
  const uint64_t due = !soon_.empty() ? now : !heap_.empty() ? heap_.front().at : kNever;
  if (due >= armed_at_) return;  // tick_ fires no later than that already
  assert(due >= now);
  // An earlier notification replaces tick_'s pending one (sc_event's rule).
  tick_.notify(due > now ? sc_time::from_value(due - now) : sc_core::SC_ZERO_TIME);
  armed_at_ = due;
}

void Scheduler::run_instant(uint64_t now) {
  for (;;) {
    // One round: every Wakeup due now, in id order; what they schedule for
    // now waits for the next round.
    round_.clear();
    while (!heap_.empty() && heap_.front().at <= now) {
      if (live(heap_.front())) take(heap_.front());
      std::pop_heap(heap_.begin(), heap_.end(), Later{});
      heap_.pop_back();
    }
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
  drop_void_top();
  return heap_.empty() ? kNever : heap_.front().at;
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

void Wakeup::notify(const sc_time& delay) {
  const uint64_t now = sim_time().value();
  const uint64_t at = now + delay.value();
  if (at_ <= at) return;  // the earliest wins (kIdle: nothing pending)
  at_ = at;
  scheduler_.schedule(*this, at, now);
}

void Wakeup::cancel() { at_ = kIdle; }

}  // namespace p2
