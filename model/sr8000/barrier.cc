#include "sr8000/barrier.h"

namespace p2 {

void SrBarrierUnit::arrive(unsigned node, unsigned color, uint64_t group) {
  agenda_.after(config_.barrier_signal, [this, node, color, group] {
    Round& r = rounds_[color];
    if (!r.active) {
      r.active = true;
      r.group = group;
      r.arrived.assign(config_.nodes, false);
      for (unsigned d = 0; d < 3; ++d) r.heard[d].assign(config_.nodes / config_.extent(d), 0);
      r.released = 0;
      r.to_release = 1;
      for (unsigned d = 0; d < 3; ++d)
        if (d != config_.dims() - 1) r.to_release *= SR_GROUP_COUNT(group, d);
    } else if (group != r.group) {
      stats_.refused++;
      agenda_.after(config_.barrier_signal, [this, node, color] { release_(node, color, SR_ERR_GROUP_MISMATCH); });
      return;
    }
    if (r.arrived[node]) return;  // already counted in this round
    r.arrived[node] = true;
    signal(0, config_.col(node), config_.row(node), config_.plane(node), color);
  });
}

void SrBarrierUnit::signal(unsigned dim, unsigned c, unsigned r, unsigned k, unsigned color) {
  Round& round = rounds_[color];
  const unsigned index = dim == 0 ? r + config_.y * k : dim == 1 ? c + config_.x * k : c + config_.x * r;
  if (++round.heard[dim][index] < SR_GROUP_COUNT(round.group, dim)) return;
  if (dim + 1 == config_.dims()) {
    release_stage(dim, c, r, k, color);
    return;
  }
  // Done here: tell each crossbar of the next dimension that meets this one
  // inside the group (the y-crossbars of the group's columns in this plane;
  // the z-crossbars of this column in the group's rows).
  const unsigned next = dim + 1, first = SR_GROUP_FIRST(round.group, dim), count = SR_GROUP_COUNT(round.group, dim);
  for (unsigned v = first; v < first + count; ++v) {
    const unsigned nc = next == 1 ? v : c, nr = next == 2 ? v : r;
    agenda_.after(config_.barrier_detect + config_.barrier_signal,
                  [this, next, nc, nr, k, color] { signal(next, nc, nr, k, color); });
  }
}

void SrBarrierUnit::release_stage(unsigned dim, unsigned c, unsigned r, unsigned k, unsigned color) {
  Round& round = rounds_[color];
  const unsigned first = SR_GROUP_FIRST(round.group, dim), count = SR_GROUP_COUNT(round.group, dim);
  for (unsigned v = first; v < first + count; ++v) {
    const unsigned n = config_.node_at(dim == 0 ? v : c, dim == 1 ? v : r, dim == 2 ? v : k);
    agenda_.after(config_.barrier_detect + config_.barrier_signal,
                  [this, n, color] { release_(n, color, SR_OK); });
  }
  if (++round.released == round.to_release) {
    round.active = false;
    stats_.completed++;
  }
}

}  // namespace p2
