// agenda.h - actions due at given simulated times, run in (time, order of
// scheduling) order from one wake-up of the scheduler (core/scheduler.h):
// the pipelines of the InfiniBand and SR8000 units have many stages with
// different delays, which a single FIFO (timed_queue.h) cannot order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

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
    items_.push_back(Item{when.value(), seq_++, std::move(f)});
    std::push_heap(items_.begin(), items_.end(), Later{});
    arm();
  }
  void after(sc_core::sc_time delay, std::function<void()> f) {
    at(sim_time() + delay, std::move(f));
  }
  bool empty() const { return items_.empty(); }

 private:
  void arm() {
    const uint64_t now = sim_time().value();
    const uint64_t due = items_.front().at;
    wake_.notify(ps(due > now ? due - now : 0));
  }
  void run() {
    const uint64_t now = sim_time().value();
    while (!items_.empty() && items_.front().at <= now) {
      std::pop_heap(items_.begin(), items_.end(), Later{});
      auto f = std::move(items_.back().f);
      items_.pop_back();
      f();
    }
    if (!items_.empty()) arm();
  }
  // A heap, earliest (time, order of scheduling) on top: no allocation per
  // action once it has grown, where a map allocated a node for each.
  struct Item {
    uint64_t at, seq;
    std::function<void()> f;
  };
  struct Later {
    bool operator()(const Item& a, const Item& b) const {
      return a.at != b.at ? a.at > b.at : a.seq > b.seq;
    }
  };
  std::vector<Item> items_;
  uint64_t seq_ = 0;
  Wakeup wake_;
};

}  // namespace p2
