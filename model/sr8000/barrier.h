// barrier.h - the SR8000 hardware barrier, one state machine per colour
// spread over the crossbars (model/sr8000/README.md, "Published figures"):
// each x-crossbar sees its member nodes arrive; once all have, it signals
// every y-crossbar of the group's columns in its plane; a y-crossbar that has
// heard from every row of the group signals (3D) every z-crossbar of its
// column in the group's rows, and a z-crossbar that has heard from every
// plane of the group tells its member nodes. The last crossbar stage of the
// machine tells the nodes: the x-crossbar in 1D, the y-crossbar in 2D.
// Every step is a signal on a dedicated line (sr8000_barrier_signal_ns) plus
// the crossbar's detection (sr8000_barrier_detect_ns), so the time from the
// last arrival to every release is the same for any group of one machine,
// and a machine one dimension larger adds one step: flat in p.
//
// An arrival carrying a different group than the barrier in progress is
// completed at once with SR_ERR_GROUP_MISMATCH (the others go on waiting for
// a node that is not coming: the library never lets that happen, and the
// simulator's deadlock report names who waits).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

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

  // `node` arrived (its NIA's signal leaves now) in the group `group` (an
  // SR_GROUP_BOX the NIA has checked).
  void arrive(unsigned node, unsigned color, uint64_t group);
  const SrBarrierStats& stats() const { return stats_; }

 private:
  struct Round {
    bool active = false;
    uint64_t group = 0;
    std::vector<bool> arrived;  // per node
    // Per crossbar of each dimension: the signals it has had (x: member
    // arrivals; y: rows done; z: columns of planes done).
    std::array<std::vector<unsigned>, 3> heard;
    unsigned released = 0, to_release = 0;  // crossbars of the last stage
  };
  // A signal reached crossbar `index` of dimension `dim` (its coordinates:
  // column c, row r, plane k of one of its nodes).
  void signal(unsigned dim, unsigned c, unsigned r, unsigned k, unsigned color);
  void release_stage(unsigned dim, unsigned c, unsigned r, unsigned k, unsigned color);

  const Sr8000Config& config_;
  Agenda& agenda_;
  Release release_;
  std::array<Round, SR_COLORS> rounds_;
  SrBarrierStats stats_;
};

}  // namespace p2
