// barrier.h - the SR8000 hardware barrier, one state machine per colour
// spread over the crossbars (model/sr8000/README.md, "Published figures"):
// each x-crossbar sees its member nodes arrive; once all have, it signals
// every y-crossbar of the group's columns; a y-crossbar that has heard from
// every row of the group tells its member nodes. With one crossbar (1D) the
// x-crossbar tells its nodes itself.
// Every step is a signal on a dedicated line (sr8000_barrier_signal_ns) plus
// the crossbar's detection (sr8000_barrier_detect_ns), so the time from the
// last arrival to every release is the same for 2 nodes or 64: flat in p.
//
// An arrival carrying a different group than the barrier in progress is
// completed at once with SR_ERR_GROUP_MISMATCH (the others go on waiting for
// a node that is not coming: the library never lets that happen, and the
// simulator's deadlock report names who waits).
#pragma once

#include <array>
#include <cstdint>
#include <functional>

#include "core/agenda.h"
#include "sr8000/config.h"
#include "sr8000_hw.h"

namespace p2 {

struct SrBarrierStats {
  uint64_t completed = 0, refused = 0;
};

class SrBarrierUnit {
 public:
  // `release(node, color, status)`: the barrier of `color` completed at `node`.
  using Release = std::function<void(unsigned node, unsigned color, unsigned status)>;
  SrBarrierUnit(const Sr8000Config& config, Agenda& agenda, Release release)
      : config_(config), agenda_(agenda), release_(std::move(release)) {}

  // `node` arrived (its NIA's signal leaves now) in the group `group`.
  void arrive(unsigned node, unsigned color, uint64_t group);
  const SrBarrierStats& stats() const { return stats_; }

 private:
  struct Round {
    bool active = false;
    uint64_t group = 0, arrived = 0;
    uint64_t rows_done = 0;           // x-crossbars that saw all their members
    std::array<uint64_t, 8> heard{};  // per column: rows its y-crossbar heard from
    uint64_t cols_released = 0;
  };
  void at_x_crossbar(unsigned node, unsigned color, uint64_t group);
  void at_y_crossbar(unsigned col, unsigned row, unsigned color);
  uint64_t row_mask(unsigned row) const;
  uint64_t rows_of(uint64_t group) const;
  uint64_t cols_of(uint64_t group) const;

  const Sr8000Config& config_;
  Agenda& agenda_;
  Release release_;
  std::array<Round, SR_COLORS> rounds_;
  SrBarrierStats stats_;
};

}  // namespace p2
