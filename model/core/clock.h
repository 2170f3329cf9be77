// clock.h - the chip clock grid. Every PEACH2 event lands on an edge of the
// chip_mhz clock; links and hosts keep picosecond time.
#pragma once

#include <cstdint>

#include <systemc>

#include "core/params.h"
#include "core/scheduler.h"  // ps()

namespace p2 {

inline sc_core::sc_time ns(double v) { return sc_core::sc_time(v, sc_core::SC_NS); }

class ChipClock {
 public:
  explicit ChipClock(double mhz) : period_(ps(static_cast<uint64_t>(1e6 / mhz + 0.5))) {}
  sc_core::sc_time period() const { return period_; }
  sc_core::sc_time cycles(uint64_t n) const { return period_ * static_cast<double>(n); }
  // The first clock edge at or after t.
  sc_core::sc_time edge_at_or_after(sc_core::sc_time t) const {
    uint64_t p = period_.value();
    return ps((t.value() + p - 1) / p * p);
  }
  uint64_t cycle_count(sc_core::sc_time t) const { return t.value() / period_.value(); }

 private:
  sc_core::sc_time period_;
};

}  // namespace p2
