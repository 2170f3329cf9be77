// timed_queue.h - items that become due at nondecreasing times, and the
// unit's callback that runs when the head is due (on_due). Units use one per pipeline
// (a link's arrivals, a host's write buffer, a router output), so there is one
// pending wake-up per pipeline, never one per item (core/scheduler.h).
#pragma once

#include <cassert>
#include <deque>
#include <functional>
#include <utility>

#include <systemc>

#include "core/scheduler.h"

namespace p2 {

template <typename T>
class TimedQueue {
 public:
  TimedQueue() = default;

  // `due` must not be earlier than the last pushed item's.
  void push(sc_core::sc_time due, T item) {
    assert(items_.empty() || due >= items_.back().first);
    bool was_empty = items_.empty();
    items_.emplace_back(due, std::move(item));
    if (was_empty) arm();
  }
  bool head_due() const {
    return !items_.empty() && items_.front().first <= sim_time();
  }
  T pop() {
    T item = std::move(items_.front().second);
    items_.pop_front();
    if (!items_.empty()) arm();
    return item;
  }
  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  sc_core::sc_time last_due() const { return items_.back().first; }
  // What runs when the head is due (the unit pops what is due).
  void on_due(std::function<void()> f) { wake_.bind(std::move(f)); }

 private:
  void arm() {
    sc_core::sc_time now = sim_time();
    sc_core::sc_time due = items_.front().first;
    // A pending earlier wake-up (at once, when the popped item's successor
    // was due then) would swallow this later one: replace it.
    wake_.cancel();
    wake_.notify(due > now ? due - now : sc_core::SC_ZERO_TIME);
  }
  std::deque<std::pair<sc_core::sc_time, T>> items_;
  Wakeup wake_;
};

}  // namespace p2
