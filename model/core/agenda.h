// agenda.h - actions due at given simulated times, run in (time, order of
// scheduling) order from one wake-up of the scheduler (core/scheduler.h):
// the pipelines of the InfiniBand and SR8000 units have many stages with
// different delays, which a single FIFO (timed_queue.h) cannot order.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <utility>

#include <systemc>

#include "core/scheduler.h"

namespace p2 {

class Agenda : public sc_core::sc_module {
 public:
  explicit Agenda(sc_core::sc_module_name name)
      : sc_module(name), wake_(Wakeup::Kind::Arrival, [this] { run(); }) {}
  // Runs `f` at `when` (not before now).
  void at(sc_core::sc_time when, std::function<void()> f) {
    const sc_core::sc_time now = sim_time();
    if (when < now) when = now;
    items_.emplace(std::make_pair(when.value(), seq_++), std::move(f));
    arm();
  }
  void after(sc_core::sc_time delay, std::function<void()> f) {
    at(sim_time() + delay, std::move(f));
  }
  bool empty() const { return items_.empty(); }

 private:
  void arm() {
    const uint64_t now = sim_time().value();
    const uint64_t due = items_.begin()->first.first;
    wake_.notify(ps(due > now ? due - now : 0));
  }
  void run() {
    const uint64_t now = sim_time().value();
    while (!items_.empty() && items_.begin()->first.first <= now) {
      auto f = std::move(items_.begin()->second);
      items_.erase(items_.begin());
      f();
    }
    if (!items_.empty()) arm();
  }
  std::map<std::pair<uint64_t, uint64_t>, std::function<void()>> items_;
  uint64_t seq_ = 0;
  Wakeup wake_;
};

}  // namespace p2
