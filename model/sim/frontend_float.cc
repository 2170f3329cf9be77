// frontend_float.cc - helper threads that poll memory (frontend.h,
// "Pollers"): which running lanes float, when a floating one settles, and
// what unsettles it; the memory a wait looks at besides its own word; and
// whether a lane is blocked. Calls no other part of the frontend (the loop,
// the admission and the reports call it). Depends on the channel's fields
// and the nodes' memory.
#include "sim/frontend.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace p2 {

// The host CPU time (ns) of a lane's thread, from its scheduler statistics;
// -1 when it cannot be read.
int64_t Frontend::thread_cpu_ns(const Rank& r) const {
  const int32_t tid = p2_ld(&r.channel->tid);
  const pid_t pid = ranks_[r.owner].pid;
  if (pid <= 0 || tid <= 0) return -1;
  char path[64], buf[96];
  std::snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", static_cast<int>(pid),
                static_cast<int>(tid));
  FILE* f = std::fopen(path, "r");
  if (!f) return -1;
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  return n ? static_cast<int64_t>(std::strtoull(buf, nullptr, 10)) : -1;
}

// A rank that sends nothing until it is answered (or ever again). Here, the
// lowest of the frontend's units, as every other one asks it (running()).
bool Frontend::blocked(const Rank& r) const {
  if (r.waiting || r.reaped) return true;  // a reaped rank's ring is final
  if (r.queue.empty()) return false;
  uint32_t op = r.queue.back().op;
  return p2_chan_op_blocks(op) || op == P2_CHAN_EXIT;
}

// A running lane floats when it is a helper thread (lane > 0) that has spent
// kPollSettleCpuNs of CPU time in the program's own code since it last left
// the libraries while no other lane of its rank runs (they wait, are parked
// or are done): by the rule (frontend.h) it polls memory. Then, and at every
// idle turn after, a settling lane that has had its kPollSettleCpuNs since
// its mark is settled. True when a lane changed state.
bool Frontend::float_pollers() {
  bool changed = false;
  any_floating_ = false;
  for (unsigned i : live_) {
    Rank& r = ranks_[i];
    any_floating_ = any_floating_ || r.floating;
    if (r.floating) {
      // The statistics lag the thread by up to a tick: only a reading newer
      // than the one at the mark is a point on its CPU time after the change.
      const int64_t now = r.settling ? thread_cpu_ns(r) : 0;
      if (r.settling && r.settle_base_ns < 0 && now > r.settle_mark_ns) r.settle_base_ns = now;
      if (r.settling && r.settle_base_ns >= 0 && now - r.settle_base_ns >= kPollSettleCpuNs) {
        r.settling = false;
        changed = true;
      }
      continue;
    }
    if (r.lane == 0 || !r.attached || !running(r) || !r.queue.empty()) continue;
    const int64_t left = p2_ld(&r.channel->left_cpu_ns);
    if (left < 0 || thread_cpu_ns(r) - left < kPollSettleCpuNs) continue;
    bool alone = true;
    for (unsigned j : live_)
      alone = alone && (j == i || ranks_[j].owner != r.owner || !running(ranks_[j]));
    if (!alone) continue;
    r.floating = true;
    r.settling = false;
    r.float_floor = std::max(r.float_floor, horizon(r));
    changed = any_floating_ = true;
    // Writes are watched for pollers only once there is one: no job without
    // them pays for the hook on every write.
    for (unsigned n = 0; !watching_writes_ && n < cluster_.nodes(); n++)
      if (!ranks_on_node_[n].empty())
        cluster_.host(n).set_before_write([this, n] { unsettle_pollers_on(n); });
    watching_writes_ = true;
  }
  return changed;
}

// What a floating lane polls may have changed at time t (its node's memory
// was written, or another lane of its rank acted): from t it may react, so
// it holds the model there until it has had its CPU time to.
void Frontend::unsettle(Rank& r, uint64_t t) {
  // The rest of an instant's writes: its CPU time counts from a reading
  // after the instant anyway (float_pollers).
  if (r.settling && t <= r.float_floor) return;
  // From inside the model's activity: stop this run at the end of the
  // instant, as an answer does, so that nothing later happens before the
  // poller has had its time.
  answered_ = true;
  sched_.pause();
  r.settling = true;
  r.float_floor = std::max(r.float_floor, t);
  // A polling CPU sees a store poll_detect_ns after it (as a wait does).
  r.react_floor = std::max(r.react_floor, r.float_floor + poll_detect_ps_);
  r.settle_mark_ns = thread_cpu_ns(r);
  r.settle_base_ns = -1;
  p2_st_sc(&r.channel->clock_floor, static_cast<int64_t>(r.react_floor));
}

void Frontend::unsettle_pollers_on(unsigned node) {
  if (!any_floating_) return;  // every write of the model comes here
  for (unsigned i : live_)
    if (ranks_[i].floating && ranks_[i].node == node) unsettle(ranks_[i], now_ps());
}

// A memory wait's second word (P2_CHAN_WAIT_ALSO) holds its condition.
bool Frontend::also_satisfied(const Request& w) {
  uint64_t v;
  return cluster_.host(w.also_node).read(w.also_a, reinterpret_cast<uint8_t*>(&v), sizeof v) &&
         (v & w.also_c) == w.also_b;
}

}  // namespace p2
