// frontend.h - the simulator's side of the virtual-cluster job: serves the
// ranks' channel requests through each node's devices (NodeDevice: BAR
// stores, loads and register waits) and host memory (memory waits), and keeps
// the virtual-time protocol (below, and emu/README.md).
// Nothing here knows a device type.
//
// Virtual time. Every request carries its rank's virtual clock (ps). Ranks
// issue requests in nondecreasing stamp order. A rank is
//   running : attached (or not yet attached) and not blocked: it may still send
//             requests stamped at or after its horizon (its last stamp, the
//             clock it published, or the time of its last answer);
//   blocked : it sent a blocking request (register read, wait, test) that is
//             queued or being served: it sends nothing until answered;
//   done    : it sent EXIT, or p2run reaped it and its ring is drained.
// Ordering key of a request: (stamp, rank). A queued request executes once its
// key is smaller than (horizon, rank) of every other running rank, so requests
// with equal stamps execute in rank order and none executes before a request
// that could still arrive ahead of it. Before executing a request stamped t,
// the model has run every event at or before t (model events at t come first).
// Otherwise the model runs through every event before the smallest running
// horizon; when no rank is running, until an answer (in slices of
// kRunSlicePs). An answer stops the run at the end of its instant (the rest
// of that instant is run before any rank runs again, since the answered rank
// runs again from there). The loop drives the model's scheduler directly
// (core/scheduler.h), after one sc_start for SystemC's initialisation.
// With --clock=model nothing here depends on host timing: the same program
// gives the same simulated times every run. With --clock=cpu a running rank's
// horizon also includes the CPU time it consumed since its last call, read
// from its CPU-time clock, so a rank spinning on memory lets time advance; it
// cannot race ahead of what the ranks actually executed, because the horizon is
// the minimum over all running ranks.
//
// Threads: each thread of a rank that uses the libraries has a lane, a channel
// of its own (emu/README.md, "Threads"), kept here exactly as a rank is (the
// word "rank" below covers lanes). A parked lane (its thread asleep until
// another of the rank wakes it) is neither running nor blocked: it holds
// nothing back until the waker's UNPARK, stamped with the waker's clock, has
// executed; from then on it runs from that time.
//
// The rank's lock (P2_CHAN_LOCK / UNLOCK: the MPI layer's, which its
// threads take around each MPI call under MPI_THREAD_MULTIPLE, mpi/README.md
// "Threads"): a LOCK executes, in (time, rank) order with every other
// request, and the lane gets the lock at once if it is free, else it waits
// (blocked: it holds nothing back) until the holder's UNLOCK executes, and
// gets it at that time; waiters get it in the order their LOCKs executed. A
// lane that exits gives back the lock it holds.
//
// Pollers (--clock=model): a helper thread (not a rank's first) that runs
// on in the program's own code, making no call, while no other thread of its
// rank runs, is taken to poll memory: its node's, which the model writes, or
// its process's, which its rank's other threads write. Computation costs no
// modelled time, so holding the model at its clock would hold it for ever.
// After kPollSettleCpuNs of its CPU time it floats: it holds nothing back.
// Whenever its node's memory is written at time t, or another lane of its
// rank sends a request stamped t, it holds the model at t again until it has
// had kPollSettleCpuNs more CPU time, to react; what it sends then is stamped
// t plus poll_detect_ns (a polling CPU's delay in seeing a store). The same
// times every run rest on one assumption: such a thread reacts to what it
// waits for within that much CPU time. A helper thread that computes for
// longer while its rank's other threads wait is taken for a poller, and its
// computation then ends at the last of those times.
//
// Deadlock: no rank running, nothing queued and no model activity pending while
// some rank waits: every wait is printed and run() returns kDeadlockStatus
// (with a parked lane, after parked_may_resume's grace of host time).
// Stall: ranks running but sending nothing while the model has work that
// their clocks hold back, for Flags::stall_s of host time (check_stall):
// every rank's state, with what the running ones did last, is printed and
// run() returns kStallStatus.
//
// The unit's parts: frontend.cc (the loop, clocks and horizons, executing
// requests), frontend_admit.cc (draining and checking the rings),
// frontend_report.cc (deadlock and state reports, message text).
#pragma once

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <deque>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <time.h>

#include "channel.h"
#include "core/scheduler.h"
#include "sim/cluster.h"
#include "sim/cuda_ipc.h"

namespace p2 {

class Frontend {
 public:
  static constexpr int kDeadlockStatus = 3;
  // A rank broke the channel's protocol (a request or clock no library call
  // makes) or shrank the job's shared memory: the job ends at once, naming it.
  static constexpr int kRankFaultStatus = 4;
  // No progress for Flags::stall_s of host time while running ranks held
  // simulated time (check_stall): the job ends, naming them.
  static constexpr int kStallStatus = 5;

  // Signals the simulator's main catches: `stop` ends run() at once (SIGTERM),
  // `dump` prints every rank's state (p2run's timeout asks for it with SIGUSR1).
  // `stall_s`: host seconds without progress that end the job (0: never).
  struct Flags {
    volatile std::sig_atomic_t* stop = nullptr;
    volatile std::sig_atomic_t* dump = nullptr;
    double stall_s = 0;
  };

  Frontend(p2_job* job, Cluster& cluster, const std::vector<unsigned>& rank_node,
           p2_clock_mode clock, Flags flags);

  ~Frontend();
  Frontend(const Frontend&) = delete;
  Frontend& operator=(const Frontend&) = delete;

  // Serves the ranks until every one is done (then runs the model's remaining
  // activity to its end) and returns 0; kDeadlockStatus on a deadlock; or
  // 128 + signal when stopped.
  int run();

  // Every rank's state, one line each (deadlock and timeout reports).
  void print_ranks(std::ostream& out) const;
  // The host CPU time the ranks' own code used outside the libraries, and
  // what the clock charged for it (the end-of-job report, --stats).
  ProgramWork program_work() const;
  void report_program_work(std::ostream& out) const;
  uint64_t now_ps() const { return sim_time().value(); }

 private:
  struct Request {
    uint32_t op = 0, seq = 0, flags = 0;
    unsigned dev = 0, bar = 0;  // device requests: which device of the node, which BAR
    uint64_t stamp = 0, a = 0, b = 0, c = 0;
    uint64_t admitted_at = 0;        // the model's time when it was drained
    uint64_t deadline = UINT64_MAX;  // WAIT_MEM with P2_CHAN_WAIT_DEADLINE
    // WAIT_MEM with P2_CHAN_WAIT_ALSO: the second word (p2_chan_wait_data),
    // in the memory of rank also_rank's node, also_node
    uint32_t also_rank = 0;
    unsigned also_node = 0;
    uint64_t also_a = 0, also_b = 0, also_c = 0;
    std::vector<uint8_t> data;
  };
  // One channel: a rank's own (lane 0), or a lane of one of its threads
  // (emu/channel.h, lib/src/rt/rt_threads.c), which the rank's process takes
  // and gives back as its threads come and go; a lane nobody holds is done.
  struct Rank {
    unsigned index = 0, node = 0;
    unsigned owner = 0, lane = 0;  // the rank, and which of its channels this is
    uint32_t claims = 0;           // a thread lane: lane_claims when it was last taken
    // Its place in (time, order, claims) order: the channel's index, which
    // a thread's session keeps when retired (retire_ended_session).
    unsigned order = 0;
    uint32_t unparked_seq = 0;     // the highest parking an UNPARK has ended
    bool parked = false;           // its thread sleeps until another wakes it
    p2_job_rank* channel = nullptr;
    bool attached = false, reaped = false, done = false;
    uint64_t done_at = 0;
    pid_t pid = 0;
    uint64_t tail = 0;  // requests consumed (the segment's req_tail is only a copy for the rank)
    int cpu_fd = -1;  // --clock=cpu: /proc/PID/task/TID/schedstat of the program's thread
    std::deque<Request> queue;  // drained from the ring, not yet executed
    uint64_t last_stamp = 0;    // stamps arrive nondecreasing
    uint64_t answer_floor = 0;  // the rank's clock is at least this after an answer
    // The clock the rank had published (plus its CPU time under --clock=cpu),
    // read before its ring: see snapshot_clocks().
    uint64_t published = 0;
    bool waiting = false;       // `wait` executed and not yet answered
    bool fenced = false;        // register wait: its first read completed
    bool empty_polls = false;   // its last answer was a register read meaning "nothing yet" (empty_poll)
    // A helper thread polling memory ("Pollers" above, frontend_float.cc):
    // floating, it holds nothing back once settled; settling, it holds the
    // model at float_floor until its thread has had kPollSettleCpuNs of CPU
    // time since settle_base_ns, the first reading after settle_mark_ns. What it sends is stamped no earlier than
    // react_floor, float_floor plus the polling delay.
    bool floating = false, settling = false;
    uint64_t float_floor = 0, react_floor = 0;
    int64_t settle_mark_ns = 0, settle_base_ns = -1;
    Request wait;
  };
  // Ordered by time, then channel, then the channel's session (a thread's
  // ended session before the next thread's on its lane); `rank` is the
  // index into ranks_.
  struct Key {
    uint64_t time;
    unsigned order = ~0u;
    uint32_t session = 0;
    unsigned rank = ~0u;
    bool operator<(const Key& o) const {
      if (time != o.time) return time < o.time;
      if (order != o.order) return order < o.order;
      return session < o.session;
    }
  };
  static Key key(const Rank& r, uint64_t time) { return Key{time, r.order, r.claims, r.index}; }
  static constexpr uint64_t kNever = UINT64_MAX;
  // While every rank waits, the model runs this much simulated time per turn
  // of the loop (or to its next event, if later): long enough that the loop's
  // scans over the lanes cost nothing against the model, short enough that a
  // stop or a dump is served within milliseconds of host time.
  static constexpr uint64_t kRunSlicePs = 10'000'000;  // 10 us

  void snapshot_clocks();
  void poll_ranks();
  // Checks a request as drained, once; false after fault().
  bool admit(Rank& r, Request& q, uint64_t index);
  // Ends the job: `field` of what rank r wrote is invalid.
  void fault(const Rank& r, const std::string& field, const std::string& why);
  bool blocked(const Rank& r) const;
  bool running(const Rank& r) const { return !r.done && !r.parked && !blocked(r); }
  Rank& lane_of(unsigned rank, unsigned lane);
  // A thread took lane r while the simulator still holds its last thread's
  // session (up to its EXIT): that session moves to a spare entry of
  // ranks_, keeping its order, and r starts the new one.
  void retire_ended_session(Rank& r);
  void start_session(Rank& r);
  std::string name(const Rank& r) const;  // "rank 3" or "rank 3 thread 1"
  // Inside an MPI collective over every rank (mpi/: Open MPI's own finalize).
  bool in_world_collective(const Rank& r) const {
    return r.attached && !r.done && p2_ld(&r.channel->in_collective) != 0;
  }
  uint64_t horizon(const Rank& r) const {
    return std::max({r.last_stamp, r.answer_floor, r.published});
  }
  struct Survey {
    bool all_done = true;
    Key limit{kNever}, due{kNever};
    Rank* request = nullptr;
  };
  Survey survey();  // frontend.cc says what each field is
  Rank* next_request();
  // Whether r has a request queued, earlier in (stamp, rank) order than
  // best's (any, when best is null).
  static bool queued_before(const Rank& r, const Rank* best);
  // Rebuilds live_ (after a lane is done, or taken by a thread).
  void refresh_live();

  // Runs the model through every event at or before `last_ps`; returns false if
  // it stopped early because a waiting rank got its answer.
  bool advance_through(uint64_t last_ps);
  void step_next_instant();
  void settle();

  void execute(Rank& r, Request& q);
  // The rank's lock: a LOCK executes; an UNLOCK (or the holder's EXIT) gives it
  // to the next waiter.
  void take_lock(Rank& r, Request& q);
  void give_lock(Rank& r, bool exiting);
  void start_wait(Rank& r, Request& q);
  bool wait_satisfied(Rank& r);
  void answer(Rank& r, int32_t status, uint64_t value);
  // P2_CHAN_GPU_REGISTER: opens the rank's CUDA IPC handle and answers.
  void register_gpu(Rank& r);
  void on_device_change(unsigned node, unsigned dev);
  void on_memory_write(unsigned node, uint64_t addr, uint32_t len);
  bool also_satisfied(const Request& w);
  // The device a request names, or nullptr (with a warning) if there is none.
  NodeDevice* device_for(const Rank& r, const Request& q);
  std::string describe_wait(const Rank& r) const;
  std::string last_work(const Rank& r) const;  // a running lane's last call and CPU since
  int64_t thread_cpu_ns(const Rank& r) const;  // its thread's host CPU time, or -1
  // Pollers (frontend_float.cc).
  bool float_pollers();
  void unsettle(Rank& r, uint64_t t);
  void unsettle_pollers_on(unsigned node);
  void warn(const Rank& r, const std::string& what);

  int deadlock();
  int rank_fault();
  void finish();
  bool check_stall();  // true: end the job (kStallStatus)
  void explain_stall(std::ostream& out) const;
  bool exit_unreaped();
  bool parked_may_resume();  // a deadlock with parked lanes waits a little

  // Message text: "1.234 us", the latest time a rank may reach, "0x1f".
  static std::string us(uint64_t t_ps);
  static std::string stamp_limit();
  static std::string hex(uint64_t v);

  p2_job* job_;
  Cluster& cluster_;
  Scheduler& sched_ = Scheduler::of_kernel();
  p2_clock_mode clock_;
  Flags flags_;
  // A channel each (nranks_ * P2_RANK_LANES, lane_of), then the retired
  // sessions of thread lanes (a deque: entries never move).
  std::deque<Rank> ranks_;
  unsigned nranks_ = 0;
  // The lanes the loop's per-turn scans look at, in index order: those not
  // done, or with requests or a wait left (a 16-rank job has 64 lanes, 16 of
  // them in use).
  std::vector<unsigned> live_;
  bool live_stale_ = true;
  std::vector<std::vector<unsigned>> ranks_on_node_;
  // Per node: its GPU window ranges backed by real GPU memory (the real CUDA
  // path), created by the first registration.
  std::vector<std::unique_ptr<CudaIpcMemory>> gpu_ipc_;
  // Per rank: the lane holding its lock (an index into ranks_, or kNoLane),
  // and the lanes waiting for it, in the order their LOCKs executed.
  static constexpr unsigned kNoLane = ~0u;
  struct RankLock {
    unsigned holder = kNoLane;
    std::deque<unsigned> waiters;
  };
  std::vector<RankLock> locks_;
  unsigned waiting_ = 0;        // ranks with an executed, unanswered request
  // Waits on a second word (P2_CHAN_WAIT_ALSO) started; memory writes look
  // for them only while there may be one, and recount them as they look.
  unsigned also_waits_ = 0;
  uint64_t answers_ = 0, answered_at_stamp_ = 0, decided_when_asked_ = 0;  // ProgramWork
  uint32_t lanes_taken_ = 0;    // job->lanes_taken when thread lanes were last looked for
  bool answered_ = false;       // an answer was given in the current instant
  bool faulted_ = false;        // fault() ended the job
  uint64_t poll_detect_ps_ = 0;
  // Stall diagnosis (host time: when to say so, and when to give up).
  static constexpr double kStallHintSeconds = 2.0;
  // How long (host time) a deadlock waits for p2run to reap a rank that said
  // goodbye (exit_unreaped); under mpirun nobody reaps.
  static constexpr double kExitReapGraceSeconds = 0.5;
  double exit_wait_since_ = -1;
  // How long (host time) a deadlock with parked lanes waits for a request
  // from them (parked_may_resume).
  static constexpr double kParkGraceSeconds = 0.5;
  // The CPU time a polling helper thread is given to react to a change
  // before it is taken to have seen nothing it waits for ("Pollers"): a poll
  // loop's turn takes well under a microsecond; the thread's scheduler
  // statistics, which measure it, lag by up to a clock tick (4 ms).
  static constexpr int64_t kPollSettleCpuNs = 1'000'000;
  bool any_floating_ = false;  // a lane may float (float_pollers recounts)
  bool watching_writes_ = false;  // the hosts' before-write hooks are set
  double park_wait_since_ = -1;
  uint64_t park_wait_mark_ = 0;
  uint64_t requests_seen_ = 0;
  uint64_t stall_mark_ = 0;
  bool empty_poll_answered_ = false;  // a rank's register poll said "nothing yet" (empty_poll)
  double stall_since_ = 0;
  bool stall_hinted_ = false;
};

}  // namespace p2
