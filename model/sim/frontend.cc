// frontend.cc - the front end's loop (frontend.h): the ranks' clocks and
// horizons, advancing the model, executing the requests in (time, rank) order
// and answering waits. The rings are drained and checked in frontend_admit.cc;
// the diagnoses (deadlock, every rank's state) are worded in
// frontend_report.cc. Depends on the cluster (sim/cluster.h), the channel
// (emu/channel.h) and SystemC's kernel.
#include "sim/frontend.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <cstring>
#include <iostream>

#include <unistd.h>

#include "core/clock.h"
#include "shm_guard.h"
#include "sim/cuda_ipc.h"

namespace p2 {

namespace {

// Host time, for the rules that only decide when to give up (stall, reaping,
// parked lanes): never for a simulated figure.
double host_seconds() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

Frontend::Frontend(p2_job* job, Cluster& cluster, const std::vector<unsigned>& rank_node,
                   p2_clock_mode clock, Flags flags)
    : job_(job), cluster_(cluster), clock_(clock), flags_(flags) {
  poll_detect_ps_ = p2_ns_ps(job->rank_params.poll_detect_ns);
  ranks_on_node_.resize(cluster.nodes());
  gpu_ipc_.resize(cluster.nodes());
  const unsigned nranks = static_cast<unsigned>(rank_node.size());
  nranks_ = nranks;
  ranks_.resize(nranks * P2_RANK_LANES);
  locks_.resize(nranks);
  for (unsigned i = 0; i < ranks_.size(); i++) {
    Rank& r = ranks_[i];
    r.index = i;
    r.order = i;
    r.owner = i < nranks ? i : (i - nranks) / (P2_RANK_LANES - 1);
    r.lane = i < nranks ? 0 : 1 + (i - nranks) % (P2_RANK_LANES - 1);
    r.node = rank_node[r.owner];
    r.channel = p2_job_lane(job, r.owner, r.lane);
    r.done = r.lane > 0;  // a thread lane counts once a thread takes it
    ranks_on_node_[r.node].push_back(i);
  }
  // Waits are re-checked exactly when what they look at can have changed: a
  // device's registers (DMA status), or bytes landing in memory (data, flags
  // and notification ring entries alike).
  for (unsigned n = 0; n < cluster.nodes(); n++) {
    if (ranks_on_node_[n].empty()) continue;
    for (unsigned d = 0; d < cluster.device_count(); d++)
      cluster.device(n, d).set_change_observer([this, n, d] { on_device_change(n, d); });
    cluster.host(n).set_write_observer(
        [this, n](uint64_t addr, uint32_t len) { on_memory_write(n, addr, len); });
  }
}

Frontend::~Frontend() {
  for (unsigned n = 0; n < gpu_ipc_.size(); n++)
    if (gpu_ipc_[n]) cluster_.host(n).set_external_gpu(nullptr);
  for (Rank& r : ranks_)
    if (r.cpu_fd >= 0) close(r.cpu_fd);
}

// ---- Ranks ---------------------------------------------------------------

// A rank pushes a request, then publishes a clock no earlier than its stamp.
// Read in the other order (ring, then clock), a request pushed between the two
// reads would be missed while the clock read after it lets the model run past
// its stamp, and it would execute late, by host timing. So every published
// clock is read first, then the rings: what is published now covers every
// request pushed before it, and any request pushed later is stamped no earlier.
void Frontend::snapshot_clocks() {
  for (unsigned i : live_) {
    Rank& r = ranks_[i];
    r.published = 0;
    if (!r.channel || r.done) continue;
    // A parked thread sends nothing until an UNPARK, which its waker posts
    // (stamped no earlier than the wake) before going on: read with the clocks.
    r.parked = !r.done && p2_ld_sc(&r.channel->parked_seq) > r.unparked_seq;
    int64_t pub = p2_ld(&r.channel->clock_pub);
    if (pub == P2_CLOCK_UNKNOWN) continue;
    if (pub > static_cast<int64_t>(P2_CHAN_MAX_STAMP_PS)) {
      fault(r, "clock_pub", "is " + std::to_string(pub) +
                                " ps, past the latest time a rank may reach (" + stamp_limit() + ")");
      continue;
    }
    if (clock_ == P2_CLOCK_CPU) {
      // The rank published its clock minus CPU time; its clock now is that
      // plus the CPU time it has consumed so far.
      char buf[96];
      ssize_t n = r.cpu_fd >= 0 ? pread(r.cpu_fd, buf, sizeof buf - 1, 0) : -1;
      if (n <= 0) continue;
      buf[n] = '\0';
      pub += static_cast<int64_t>(std::strtoull(buf, nullptr, 10)) * 1000LL;
    }
    r.published = pub > 0 ? static_cast<uint64_t>(pub) : 0;
  }
}

// What one turn of the loop decides from, in one pass over the live ranks
// (run() takes a turn per request, so this pass is per request):
//  - all_done: every rank has left, with nothing queued;
//  - limit: the earliest horizon of a running rank, which the model may not
//    pass. A rank inside an MPI collective over every rank (mpi/: Open MPI's
//    own finalize) leaves it no earlier than the entry of any rank still
//    outside; while one is, the rank inside holds nothing back;
//  - due: the earliest deadline of a waiting rank;
//  - request: the rank whose queued request is earliest.
Frontend::Survey Frontend::survey() {
  Survey s;
  bool someone_outside = false;
  Key best_all{kNever}, best_outside{kNever};
  for (unsigned i : live_) {
    Rank& r = ranks_[i];
    if (!r.done || !r.queue.empty()) s.all_done = false;
    const bool inside = in_world_collective(r);
    if (r.lane == 0 && !r.done && !inside) someone_outside = true;
    if (running(r) && (!r.floating || r.settling)) {
      const Key k = key(r, r.attached ? std::max(horizon(r), r.float_floor) : 0);
      if (k < best_all) best_all = k;
      if (!inside && k < best_outside) best_outside = k;
    }
    if (r.waiting && r.wait.deadline != kNever) {
      const Key k = key(r, r.wait.deadline);
      if (k < s.due) s.due = k;
    }
    if (queued_before(r, s.request)) s.request = &r;
  }
  s.limit = someone_outside ? best_outside : best_all;
  return s;
}

bool Frontend::queued_before(const Rank& r, const Rank* best) {
  return !r.queue.empty() &&
         (!best || key(r, r.queue.front().stamp) < key(*best, best->queue.front().stamp));
}

Frontend::Rank* Frontend::next_request() {
  Rank* best = nullptr;
  for (unsigned i : live_)
    if (queued_before(ranks_[i], best)) best = &ranks_[i];
  return best;
}

// Every lane outside live_ is done, with nothing queued and no wait: what
// snapshot_clocks() would set for it, it keeps.
void Frontend::refresh_live() {
  live_.clear();
  for (Rank& r : ranks_) {
    if (!r.done || !r.queue.empty() || r.waiting) {
      live_.push_back(r.index);
    } else {
      r.published = 0;
    }
  }
  live_stale_ = false;
}

// ---- Advancing the model ---------------------------------------------------

void Frontend::settle() {
  while (!sched_.run_through(now_ps())) {
  }
}

bool Frontend::advance_through(uint64_t last) {
  if (answered_) {
    answered_ = false;
    return false;
  }
  uint64_t now = now_ps();
  if (now > last) return true;
  // One run through `last`. An answer on the way stops it at the end of
  // that instant (answer() calls pause()): the rank resumes there, before
  // anything later is simulated.
  sched_.run_through(last);
  if (!answered_) return true;
  answered_ = false;
  return false;
}

void Frontend::step_next_instant() {
  const uint64_t next = sched_.next_due();
  if (next != Scheduler::kNever) {
    while (!sched_.run_through(next)) {
    }
  }
  answered_ = false;
}

// ---- Requests --------------------------------------------------------------

NodeDevice* Frontend::device_for(const Rank& r, const Request& q) {
  if (q.dev < cluster_.device_count()) return &cluster_.device(r.node, q.dev);
  warn(r, "request for device " + std::to_string(q.dev) + ", but the node has " +
              std::to_string(cluster_.device_count()));
  return nullptr;
}

void Frontend::warn(const Rank& r, const std::string& what) {
  std::cerr << "p2sim: " << name(r) << " (node " << r.node << "): " << what << " at "
            << us(now_ps()) << "\n";
}

void Frontend::execute(Rank& r, Request& q) {
  // Anything but another read of a polled register: the rank does something.
  if (q.op != P2_CHAN_MMIO_READ) r.empty_polls = false;
  switch (q.op) {
    case P2_CHAN_MMIO_WRITE: {
      NodeDevice* dev = device_for(r, q);
      if (!dev) return;
      if (!dev->access_ok(q.bar, q.a, 8)) {
        warn(r, std::string("MMIO write to BAR") + std::to_string(q.bar) + " offset " + hex(q.a) +
                    ", which the " + dev->kind() + " does not decode; dropped");
        return;
      }
      dev->mmio_write(q.bar, q.a, q.b);
      return;
    }
    case P2_CHAN_BAR_WRITE: {
      NodeDevice* dev = device_for(r, q);
      if (!dev) return;
      if (!dev->access_ok(q.bar, q.a, q.data.size())) {
        warn(r, std::string("store of ") + std::to_string(q.data.size()) + " bytes to BAR" +
                    std::to_string(q.bar) + " offset " + hex(q.a) + ", outside what the " +
                    dev->kind() + " decodes; dropped");
        return;
      }
      dev->bar_write(q.bar, q.a, q.data.data(), static_cast<uint32_t>(q.data.size()));
      return;
    }
    case P2_CHAN_EXIT:
      give_lock(r, true);
      r.done = true;
      r.done_at = now_ps();
      // A thread lane is free again once its thread has ended: the runtime
      // says so (rt_thread_exit), whether or not this has run.
      return;
    case P2_CHAN_UNPARK: {
      if (q.a >= P2_RANK_LANES) {
        warn(r, "unpark of lane " + std::to_string(q.a) + ", which no rank has; dropped");
        return;
      }
      Rank& t = lane_of(r.owner, static_cast<unsigned>(q.a));
      if (q.b > t.unparked_seq) t.unparked_seq = static_cast<uint32_t>(q.b);
      // It runs again from the wake, whatever clock it published before.
      t.answer_floor = std::max(t.answer_floor, q.stamp);
      return;
    }
    case P2_CHAN_MMIO_READ:
    case P2_CHAN_WAIT_REG:
    case P2_CHAN_WAIT_MEM:
    case P2_CHAN_GPU_REGISTER:
    case P2_CHAN_GPU_UNREGISTER:
      start_wait(r, q);
      return;
    case P2_CHAN_LOCK:
      take_lock(r, q);
      return;
    case P2_CHAN_UNLOCK:
      give_lock(r, false);
      return;
    default:
      warn(r, "unknown channel request " + std::to_string(q.op) + "; dropped");
  }
}

void Frontend::start_wait(Rank& r, Request& q) {
  r.wait = std::move(q);
  r.waiting = true;
  waiting_++;
  const Request& w = r.wait;
  NodeDevice* dev = nullptr;
  uint8_t probe[8];
  if (w.op == P2_CHAN_MMIO_READ || w.op == P2_CHAN_WAIT_REG) {
    dev = device_for(r, w);
    if (!dev || !dev->access_ok(w.bar, w.a, 8)) {
      if (dev)
        warn(r, std::string(w.op == P2_CHAN_MMIO_READ ? "MMIO read of" : "wait on") + " BAR" +
                    std::to_string(w.bar) + " offset " + hex(w.a) + ", not a register of the " +
                    dev->kind());
      answer(r, P2_CHAN_FAILED, w.op == P2_CHAN_MMIO_READ ? ~0ull : 0);
      return;
    }
  }
  switch (w.op) {
    case P2_CHAN_MMIO_READ:
      dev->mmio_read(
          w.bar, w.a, [this, dev, index = r.index, seq = w.seq](uint64_t value, bool ok) {
            Rank& rr = ranks_[index];
            if (!rr.waiting || rr.wait.op != P2_CHAN_MMIO_READ || rr.wait.seq != seq) return;
            rr.empty_polls = ok && dev->empty_poll(rr.wait.bar, rr.wait.a, value);
            empty_poll_answered_ = empty_poll_answered_ || rr.empty_polls;
            answer(rr, ok ? P2_CHAN_OK : P2_CHAN_FAILED, ok ? value : ~0ull);
          });
      return;
    case P2_CHAN_WAIT_REG:
      // A CPU polls a register with reads, and a read never passes the posted
      // writes before it (PCIe ordering): so the wait sees the device only after
      // this rank's earlier stores (a DMA start, say) have landed. The first
      // poll is a real read; after it, every change of the device is checked.
      r.fenced = false;
      dev->mmio_read(
          w.bar, w.a, [this, index = r.index, seq = w.seq](uint64_t, bool ok) {
            Rank& rr = ranks_[index];
            if (!rr.waiting || rr.wait.op != P2_CHAN_WAIT_REG || rr.wait.seq != seq) return;
            rr.fenced = true;
            if (!ok)
              answer(rr, P2_CHAN_FAILED, 0);
            else if (wait_satisfied(rr))  // the state now, not the value read
              answer(rr, P2_CHAN_OK, 0);
          });
      return;
    case P2_CHAN_GPU_REGISTER:
      register_gpu(r);
      return;
    case P2_CHAN_GPU_UNREGISTER:
      if (gpu_ipc_[r.node] && gpu_ipc_[r.node]->remove(w.a)) {
        answer(r, P2_CHAN_OK, 0);
      } else {
        warn(r, "unregistering GPU window offset " + hex(w.a) + ", where no range starts");
        answer(r, P2_CHAN_FAILED, 0);
      }
      return;
    case P2_CHAN_WAIT_MEM:
      if (w.a % 8 != 0 || !cluster_.host(r.node).read(w.a, probe, 8)) {
        warn(r, "wait on memory word " + hex(w.a) +
                    ", not an aligned word of this node's host or GPU memory");
        answer(r, P2_CHAN_FAILED, 0);
        return;
      }
      if (w.flags & P2_CHAN_WAIT_ALSO) {
        if (w.also_a % 8 != 0 || !cluster_.host(w.also_node).read(w.also_a, probe, 8)) {
          warn(r, "wait on memory word " + hex(w.also_a) + " of rank " +
                      std::to_string(w.also_rank) + "'s node, not an aligned word of its host memory");
          answer(r, P2_CHAN_FAILED, 0);
          return;
        }
        also_waits_++;
      }
      break;
  }
  // Executed exactly when the model has reached the request's stamp: a test
  // is answered with the memory as it is at that simulated time.
  if (wait_satisfied(r))
    answer(r, P2_CHAN_OK, 0);
  else if (w.op == P2_CHAN_WAIT_MEM && (w.flags & P2_CHAN_WAIT_ALSO) && also_satisfied(w))
    answer(r, P2_CHAN_OK, 1);
  else if (w.op == P2_CHAN_WAIT_MEM && (!(w.flags & P2_CHAN_WAIT_BLOCK) || w.deadline <= now_ps()))
    answer(r, P2_CHAN_NOT_YET, 0);  // a test, or a deadline already reached: "not yet", now
}

// The rank's lock (frontend.h). Executed when the model has reached the
// request's stamp: free, it is this lane's at that time.
void Frontend::take_lock(Rank& r, Request& q) {
  r.wait = std::move(q);
  r.waiting = true;
  waiting_++;
  RankLock& l = locks_[r.owner];
  if (l.holder == kNoLane) {
    l.holder = r.index;
    answer(r, P2_CHAN_OK, 0);
  } else {
    l.waiters.push_back(r.index);
  }
}

void Frontend::give_lock(Rank& r, bool exiting) {
  RankLock& l = locks_[r.owner];
  if (l.holder != r.index) {
    if (!exiting) warn(r, "unlock of its rank's lock, which this thread does not hold; dropped");
    return;
  }
  l.holder = kNoLane;
  while (!l.waiters.empty()) {
    Rank& w = ranks_[l.waiters.front()];
    l.waiters.pop_front();
    if (!w.waiting || w.wait.op != P2_CHAN_LOCK) continue;  // its process is gone
    l.holder = w.index;
    answer(w, P2_CHAN_OK, 0);
    return;
  }
}

bool Frontend::wait_satisfied(Rank& r) {
  const Request& w = r.wait;
  switch (w.op) {
    case P2_CHAN_WAIT_REG:
      return (cluster_.device(r.node, w.dev).peek(w.bar, w.a) & w.c) == w.b;
    case P2_CHAN_WAIT_MEM: {
      uint64_t v;
      if (!cluster_.host(r.node).read(w.a, reinterpret_cast<uint8_t*>(&v), sizeof v))
        return false;
      return (v & w.c) == w.b;
    }
  }
  return false;
}

void Frontend::register_gpu(Rank& r) {
  const Request& w = r.wait;
  p2_chan_gpu_ipc ipc;
  std::string why;
  if (w.data.size() != sizeof ipc) {
    why = "a malformed request";
  } else {
    std::memcpy(&ipc, w.data.data(), sizeof ipc);
    const uint64_t window = cluster_.params().gpu_memory_bytes;
    if (w.a >= window || w.b > window - w.a) {
      why = "the range lies outside the node's GPU window";
    } else {
      std::unique_ptr<CudaIpcMemory>& m = gpu_ipc_[r.node];
      if (!m) {
        m = std::make_unique<CudaIpcMemory>(r.node);
        cluster_.host(r.node).set_external_gpu(m.get());
      }
      if (m->add(w.a, w.b, ipc.handle, ipc.alloc_offset, ipc.ordinal, &why)) {
        answer(r, P2_CHAN_OK, 0);
        return;
      }
    }
  }
  warn(r, "registering real GPU memory (" + std::to_string(w.b) + " bytes at GPU window offset " +
              hex(w.a) + "): " + why);
  answer(r, P2_CHAN_FAILED, 0);
}

void Frontend::answer(Rank& r, int32_t status, uint64_t value) {
  uint64_t t = now_ps();
  r.waiting = false;
  waiting_--;
  // The rank resumes at t (a wait also charges poll_detect_ns): nothing it
  // sends from now on is stamped earlier.
  r.answer_floor =
      t + (r.wait.op == P2_CHAN_MMIO_READ || r.wait.op == P2_CHAN_GPU_REGISTER ||
                   r.wait.op == P2_CHAN_GPU_UNREGISTER || r.wait.op == P2_CHAN_LOCK
               ? 0
               : poll_detect_ps_);
  // Its published CPU offset predates the wait; it republishes after resuming.
  if (clock_ == P2_CLOCK_CPU) p2_st_sc(&r.channel->clock_pub, P2_CLOCK_UNKNOWN);
  p2_chan_answer(r.channel, r.wait.seq, status, value, t);
  answered_ = true;
  answers_++;
  answered_at_stamp_ += t == r.wait.stamp;
  decided_when_asked_ += t == r.wait.stamp && r.wait.admitted_at >= t;
  // From inside the model's activity: stop this run at the end of the
  // instant, so advance_through() returns there.
  sched_.pause();
}

void Frontend::on_device_change(unsigned node, unsigned dev) {
  for (unsigned i : ranks_on_node_[node]) {
    Rank& r = ranks_[i];
    if (r.waiting && r.wait.op == P2_CHAN_WAIT_REG && r.wait.dev == dev && r.fenced &&
        wait_satisfied(r))
      answer(r, P2_CHAN_OK, 0);
  }
}

void Frontend::on_memory_write(unsigned node, uint64_t addr, uint32_t len) {
  for (unsigned i : ranks_on_node_[node]) {
    Rank& r = ranks_[i];
    if (r.waiting && r.wait.op == P2_CHAN_WAIT_MEM && addr < r.wait.a + 8 &&
        r.wait.a < addr + len && wait_satisfied(r))
      answer(r, P2_CHAN_OK, 0);
  }
  unsigned still = 0;
  for (size_t i = 0; also_waits_ && i < ranks_.size(); i++) {
    Rank& r = ranks_[i];
    const Request& w = r.wait;
    if (!r.waiting || w.op != P2_CHAN_WAIT_MEM || !(w.flags & P2_CHAN_WAIT_ALSO)) continue;
    if (w.also_node == node && addr < w.also_a + 8 && w.also_a < addr + len && also_satisfied(w))
      answer(r, P2_CHAN_OK, 1);
    else
      still++;
  }
  also_waits_ = still;
}

// ---- The loop ----------------------------------------------------------------

int Frontend::run() {
  // SystemC's initialisation phase; from then on this loop advances the
  // model itself (core/scheduler.h, "Direct drive").
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  sched_.drive_directly();
  settle();
  for (;;) {
    if (*flags_.stop) return 128 + *flags_.stop;
    p2_st(&job_->sim_now_ps, now_ps());
    if (*flags_.dump) {
      *flags_.dump = 0;
      std::cerr << "p2sim: state at simulated time " << us(now_ps()) << ":\n";
      print_ranks(std::cerr);
      report_program_work(std::cerr);
    }
    // Read before looking for work: a push after this read wakes the sleep below.
    uint32_t bell = p2_ld_sc(&job_->doorbell);
    if (live_stale_) refresh_live();
    snapshot_clocks();
    poll_ranks();
    if (live_stale_) refresh_live();  // a thread took a lane: it counts from now
    if (faulted_ || p2_shm_guard_lost()) return rank_fault();
    const Survey survey = this->survey();
    if (survey.all_done) {
      finish();
      return 0;
    }
    // Ranks polling an empty register keep this loop busy, so the check
    // below is never reached: look after each such answer.
    if (empty_poll_answered_) {
      empty_poll_answered_ = false;
      if (check_stall()) return kStallStatus;
    }
    const Key limit = survey.limit;
    // A wait with a deadline is answered "not yet" at its deadline, in (time,
    // rank) order with the requests, unless its memory changes first.
    const Key due = survey.due;
    if (Rank* r = survey.request) {
      const Key k = key(*r, r->queue.front().stamp);
      if (k < limit && !(due < k)) {
        if (!advance_through(std::max(k.time, now_ps()))) continue;  // someone was answered
        Request q = std::move(r->queue.front());
        r->queue.pop_front();
        execute(*r, q);
        if (r->done) live_stale_ = true;
        settle();
        continue;
      }
    }
    if (due < limit) {
      if (!advance_through(std::max(due.time, now_ps()))) continue;  // someone was answered
      Rank& w = ranks_[due.rank];
      if (w.waiting && w.wait.deadline == due.time) answer(w, P2_CHAN_NOT_YET, 0);
      continue;
    }
    if (limit.time == kNever) {
      // No rank can send anything until it is answered: run the model until
      // an answer pauses it, a slice of simulated time at a time (so that a
      // stop or a state dump is seen), instead of one instant per turn.
      const uint64_t next = sched_.next_due();
      if (next != Scheduler::kNever) {
        advance_through(std::max(next, now_ps() + kRunSlicePs));
        answered_ = false;
        continue;
      }
      if (waiting_ > 0 && !exit_unreaped() && !parked_may_resume()) return deadlock();
    } else if (limit.time > 0 && !advance_through(limit.time - 1)) {
      continue;
    }
    // Nothing more can happen until a rank sends something (or a poller
    // floats); with --clock=cpu, also until running ranks use more CPU time.
    if (clock_ == P2_CLOCK_MODEL && float_pollers()) continue;
    if (check_stall()) return kStallStatus;
    // With --clock=cpu the running ranks' horizons move by themselves; poll
    // them often, but only while there is something for time to advance.
    bool poll =
        clock_ == P2_CLOCK_CPU && (sched_.next_due() != Scheduler::kNever || next_request());
    p2_job_sleep(job_, bell, poll ? P2_CHAN_CPU_POLL_US : P2_CHAN_LIVENESS_US);
  }
}

// No progress: the model has something to do (a rank waits for an answer, a
// request is queued, events are pending) and cannot go on, because a running
// rank (or thread) holds simulated time at its clock and sends nothing: it
// computes, spins on memory, sleeps or blocks outside the libraries. Under
// --clock=model (and =instructions) a rank's own computation moves no clock,
// so a rank spinning on memory for what the network would write there holds
// the job forever; a rank that legitimately computes for long holds it just
// as well, until its next call. Neither can be told from the other, so the
// rule is host time: the first kStallHintSeconds without progress print the
// ranks' states once, and flags_.stall_s (p2run --stall, default 60 s; 0:
// never) ends the job with kStallStatus and the same diagnosis. Progress is
// anything that moves: the model's time, a request, a rank attaching or
// leaving. Host time is read only here; it never changes what is simulated.
bool Frontend::check_stall() {
  // Ranks that only poll a register saying "nothing yet" (a notification
  // table, empty_poll) move simulated time and send requests without doing
  // anything: while every live rank does only that, progress is what the
  // memories see (DMA and PIO writes, device reads of memory); a rank's own
  // stores would clear its mark.
  bool all_polling = false;
  for (const Rank& r : ranks_) {
    if (!r.attached || r.done) continue;
    if (!r.empty_polls) {
      all_polling = false;
      break;
    }
    all_polling = true;
  }
  uint64_t mark = now_ps() ^ (requests_seen_ * 0x9e3779b97f4a7c15ull);
  if (all_polling) {
    mark = 0;
    for (unsigned n = 0; n < cluster_.nodes(); ++n) {
      const HostStats& h = cluster_.host(n).stats();
      mark = mark * 31 + h.writes + h.reads + h.dropped_writes;
    }
  }
  for (const Rank& r : ranks_)
    mark = mark * 31 + (r.attached ? 1 : 0) + (r.done ? 2 : 0);
  const double wall = host_seconds();
  const bool something_to_do =
      waiting_ > 0 || sched_.next_due() != Scheduler::kNever || next_request();
  if (mark != stall_mark_ || !something_to_do) {
    stall_mark_ = mark;
    stall_since_ = wall;
    return false;
  }
  const double idle = wall - stall_since_;
  const double limit = flags_.stall_s;
  if (limit > 0 && idle >= limit) {
    std::cerr << "p2sim: no progress for " << limit << " s (--stall) at simulated time "
              << us(now_ps()) << "; ending the job:\n";
    print_ranks(std::cerr);
    explain_stall(std::cerr);
    return true;
  }
  // The early word, once a job, unless --stall is about to say it anyway.
  if (stall_hinted_ || idle < kStallHintSeconds || (limit > 0 && limit < 4 * kStallHintSeconds))
    return false;
  stall_hinted_ = true;
  std::cerr << "p2sim: no progress for " << kStallHintSeconds << " s at simulated time "
            << us(now_ps()) << ":\n";
  print_ranks(std::cerr);
  explain_stall(std::cerr);
  if (limit > 0)
    std::cerr << "p2sim: the job ends if nothing moves for " << limit << " s (--stall)\n";
  return false;
}

// A rank that said goodbye (P2_CHAN_EXIT) may be failing on its own, in its
// exit path (exit(1) after an error): its status, not the deadlock its end
// leads the others into, is the job's (p2run's on_child_exit). So a deadlock
// waits until p2run has reaped every such rank, or kExitReapGraceSeconds of
// host time. Only the end's wording depends on it, never a simulated time.
bool Frontend::exit_unreaped() {
  bool pending = false;
  for (const Rank& r : ranks_)
    if (r.lane == 0 && r.done && !r.reaped) pending = true;
  if (!pending) return false;
  const double wall = host_seconds();
  if (exit_wait_since_ < 0) exit_wait_since_ = wall;
  return wall - exit_wait_since_ < kExitReapGraceSeconds;
}

// A parked lane's thread may already run on the host, woken by something
// the simulator does not see: the MPI layer's lock, which a thread hands
// over as it starts a wait here (mpi/README.md, "Threads"), ends a parking
// that no UNPARK ends (lib/src/rt/rt_threads.c). That thread posts within
// microseconds of host time, so while lanes are parked a deadlock is called
// only after kParkGraceSeconds without a new request. The loop sleeps on the
// doorbell meanwhile, which the thread's post rings. Only the moment a real
// deadlock is called depends on host time, never a simulated figure.
bool Frontend::parked_may_resume() {
  bool parked = false;
  for (unsigned i : live_) parked = parked || ranks_[i].parked;
  if (!parked) return false;
  const double wall = host_seconds();
  if (park_wait_since_ < 0 || park_wait_mark_ != requests_seen_) {
    park_wait_mark_ = requests_seen_;
    park_wait_since_ = wall;
  }
  return wall - park_wait_since_ < kParkGraceSeconds;
}

void Frontend::finish() {
  // Every rank is gone. Let what they started run out, so that statistics and
  // traces cover it.
  while (sched_.next_due() != Scheduler::kNever && !*flags_.stop) step_next_instant();
  // The last DLLPs still on the wires arrive, though their arrival is no
  // event (PcieLink::quiet_at): the run ends when every link is quiet.
  uint64_t quiet = now_ps();
  for (const PcieLink* l : cluster_.links())
    quiet = std::max<uint64_t>(quiet, l->quiet_at().value());
  if (!*flags_.stop) sched_.run_through(quiet);
}

}  // namespace p2
