#include "sr8000/barrier.h"

namespace p2 {

uint64_t SrBarrierUnit::row_mask(unsigned row) const {
  const uint64_t one_row = config_.x >= 64 ? ~0ull : (1ull << config_.x) - 1;
  return one_row << (row * config_.x);
}

uint64_t SrBarrierUnit::rows_of(uint64_t group) const {
  uint64_t rows = 0;
  for (unsigned r = 0; r < config_.y; ++r)
    if (group & row_mask(r)) rows |= 1ull << r;
  return rows;
}

uint64_t SrBarrierUnit::cols_of(uint64_t group) const {
  uint64_t cols = 0;
  for (unsigned n = 0; n < config_.nodes; ++n)
    if ((group >> n) & 1u) cols |= 1ull << config_.col(n);
  return cols;
}

void SrBarrierUnit::arrive(unsigned node, unsigned color, uint64_t group) {
  agenda_.after(config_.barrier_signal, [this, node, color, group] { at_x_crossbar(node, color, group); });
}

void SrBarrierUnit::at_x_crossbar(unsigned node, unsigned color, uint64_t group) {
  Round& r = rounds_[color];
  if (!r.active) {
    r = Round{};
    r.active = true;
    r.group = group;
  } else if (group != r.group) {
    stats_.refused++;
    agenda_.after(config_.barrier_signal,
                  [this, node, color] { release_(node, color, SR_ERR_GROUP_MISMATCH); });
    return;
  }
  r.arrived |= 1ull << node;
  const unsigned row = config_.row(node);
  const uint64_t members = r.group & row_mask(row);
  if ((r.arrived & members) != members) return;
  // This x-crossbar's members are all here.
  r.rows_done |= 1ull << row;
  if (!config_.two_d()) {
    const uint64_t everyone = r.group;
    r.active = false;
    stats_.completed++;
    for (unsigned n = 0; n < config_.nodes; ++n)
      if ((everyone >> n) & 1u)
        agenda_.after(config_.barrier_detect + config_.barrier_signal,
                      [this, n, color] { release_(n, color, SR_OK); });
    return;
  }
  const uint64_t cols = cols_of(r.group);
  for (unsigned c = 0; c < config_.x; ++c)
    if ((cols >> c) & 1u)
      agenda_.after(config_.barrier_detect + config_.barrier_signal,
                    [this, c, row, color] { at_y_crossbar(c, row, color); });
}

void SrBarrierUnit::at_y_crossbar(unsigned col, unsigned row, unsigned color) {
  Round& r = rounds_[color];
  r.heard[col] |= 1ull << row;
  const uint64_t rows = rows_of(r.group);
  if ((r.heard[col] & rows) != rows) return;
  // The whole plane arrived: this y-crossbar tells its members.
  const uint64_t group = r.group;
  for (unsigned n = 0; n < config_.nodes; ++n)
    if (((group >> n) & 1u) && config_.col(n) == col)
      agenda_.after(config_.barrier_detect + config_.barrier_signal,
                    [this, n, color] { release_(n, color, SR_OK); });
  r.cols_released |= 1ull << col;
  if (r.cols_released == cols_of(group)) {
    r.active = false;
    stats_.completed++;
  }
}

}  // namespace p2
