// frontend_report.cc - the front end's diagnoses (frontend.h), printed
// only when a job ends badly or is asked for its state: a rank that shrank
// the job's memory, a deadlock, a stall, every rank's state and what it
// waits for or did last; the program's own work at the job's end; and how
// times and values read in every message of the front end. Depends on the
// cluster's devices (their register and memory-wait descriptions).
#include "sim/frontend.h"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>

#include <sys/wait.h>

#include "shm_guard.h"

namespace p2 {

// ---- Message text ------------------------------------------------------------

std::string Frontend::us(uint64_t t_ps) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3f us", static_cast<double>(t_ps) / 1e6);
  return buf;
}

// The latest time a rank may reach, for messages.
std::string Frontend::stamp_limit() {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f s", static_cast<double>(P2_CHAN_MAX_STAMP_PS) * 1e-12);
  return buf;
}

std::string Frontend::hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

// ---- Diagnosis ---------------------------------------------------------------

std::string Frontend::name(const Rank& r) const {
  return "rank " + std::to_string(r.owner) +
         (r.lane ? " thread " + std::to_string(r.lane) : std::string());
}

int Frontend::rank_fault() {
  char full[256];
  if (const char* lost = p2_shm_guard_lost()) {
    if (p2_shm_full(full, sizeof full))
      std::cerr << "p2sim: " << lost << ": " << full << "; ending the job at simulated time "
                << us(now_ps()) << "\n";
    else
      std::cerr << "p2sim: " << lost << " shrank under the simulator (a process of the job "
                << "truncated it); ending the job at simulated time " << us(now_ps()) << "\n";
  }
  return kRankFaultStatus;
}

int Frontend::deadlock() {
  // Nothing scheduled: either nothing is in flight, or TLPs are stuck
  // waiting for credits that can never come back.
  for (unsigned d = 0; d < cluster_.device_count(); d++) {
    std::string stall = cluster_.network(d).describe_stall();
    if (stall.empty()) continue;
    std::cerr << "p2sim: deadlock at simulated time " << us(now_ps()) << ": " << stall << "\n";
    print_ranks(std::cerr);
    return kDeadlockStatus;
  }
  std::cerr << "p2sim: deadlock at simulated time " << us(now_ps())
            << ": every rank waits and nothing is in flight";
  for (const Rank& r : ranks_)
    if (r.lane == 0 && r.reaped && r.done) {
      std::cerr << " (rank " << r.index << " is gone: it died without leaving the simulator)";
      break;
    }
  std::cerr << "\n";
  print_ranks(std::cerr);
  return kDeadlockStatus;
}

std::string Frontend::describe_wait(const Rank& r) const {
  const Request& w = r.waiting ? r.wait : r.queue.back();
  Cluster& cluster = const_cast<Cluster&>(cluster_);
  const NodeDevice* dev = w.dev < cluster.device_count() ? &cluster.device(r.node, w.dev) : nullptr;
  std::ostringstream s;
  switch (w.op) {
    case P2_CHAN_WAIT_REG:
      if (!dev) break;
      s << dev->kind() << " register " << dev->describe(w.bar, w.a) << " & " << hex(w.c)
        << " == " << hex(w.b);
      if (dev->access_ok(w.bar, w.a, 8)) s << " (now " << hex(dev->peek(w.bar, w.a)) << ")";
      return s.str();
    case P2_CHAN_WAIT_MEM: {
      std::string what;
      for (unsigned d = 0; d < cluster.device_count() && what.empty(); d++)
        what = cluster.device(r.node, d).describe_memory_wait(w.a, w.c, w.b);
      uint64_t v;
      if (what.empty()) {
        s << "memory word " << hex(w.a) << " & " << hex(w.c) << " == " << hex(w.b);
        if (cluster.host(r.node).read(w.a, reinterpret_cast<uint8_t*>(&v), sizeof v))
          s << " (now " << hex(v) << ")";
      } else {
        s << what;
      }
      if (w.flags & P2_CHAN_WAIT_ALSO) {
        s << ", or rank " << w.also_rank << "'s memory word " << hex(w.also_a) << " & "
          << hex(w.also_c) << " == " << hex(w.also_b);
        if (cluster.host(w.also_node).read(w.also_a, reinterpret_cast<uint8_t*>(&v), sizeof v))
          s << " (now " << hex(v) << ")";
      }
      return s.str();
    }
    case P2_CHAN_LOCK: {
      unsigned h = locks_[r.owner].holder;
      s << "its rank's MPI lock";
      if (h != kNoLane) s << " (held by " << name(ranks_[h]) << ")";
      return s.str();
    }
    case P2_CHAN_MMIO_READ:
      if (!dev) break;
      s << "the answer to a read of " << dev->kind() << " register " << dev->describe(w.bar, w.a);
      return s.str();
  }
  s << "request " << w.op;
  return s.str();
}

void Frontend::print_ranks(std::ostream& out) const {
  for (const Rank& r : ranks_) {
    if (r.lane > 0 && (r.done || !r.attached)) continue;  // threads: only live ones
    out << "  " << name(r) << " (node " << r.node << "): ";
    if (r.done)
    {
      out << (r.reaped ? "gone" : "finished") << " at " << us(r.done_at);
      int st = r.reaped ? p2_ld(&r.channel->wait_status) : 0;
      if (r.reaped && WIFSIGNALED(st))
        out << " (killed by signal " << WTERMSIG(st) << ", " << strsignal(WTERMSIG(st)) << ")";
      else if (r.reaped && WIFEXITED(st) && WEXITSTATUS(st) != 0)
        out << " (exit status " << WEXITSTATUS(st) << ")";
    }
    else if (r.waiting && r.channel->mpi_wait[0] != '\0')
      // The MPI layer (mpi/) named the call the rank is blocked in.
      out << "in " << std::string(r.channel->mpi_wait, strnlen(r.channel->mpi_wait, sizeof r.channel->mpi_wait))
          << " since " << us(p2_ld(&r.channel->mpi_since_ps)) << " (waiting for "
          << describe_wait(r) << " since " << us(r.wait.stamp) << ")";
    else if (r.waiting)
      out << "waiting for " << describe_wait(r) << " since " << us(r.wait.stamp);
    else if (!r.queue.empty() && p2_chan_op_blocks(r.queue.back().op) &&
             r.channel->mpi_wait[0] != '\0')
      out << "in " << std::string(r.channel->mpi_wait, strnlen(r.channel->mpi_wait, sizeof r.channel->mpi_wait))
          << " since " << us(p2_ld(&r.channel->mpi_since_ps)) << " (about to wait for "
          << describe_wait(r) << ", queued at " << us(r.queue.back().stamp) << ")";
    else if (!r.queue.empty() && p2_chan_op_blocks(r.queue.back().op))
      out << "about to wait for " << describe_wait(r) << " (queued at "
          << us(r.queue.back().stamp) << ")";
    else if (!r.queue.empty() && r.queue.back().op == P2_CHAN_EXIT)
      out << "leaving (its exit is queued at " << us(r.queue.back().stamp) << ")";
    else if (!r.attached)
      out << "not attached to the simulator yet";
    else if (r.parked)
      out << "asleep until another thread of the rank wakes it (pthread_cond_wait or "
             "pthread_join), clock " << us(horizon(const_cast<Rank&>(r)));
    else if (in_world_collective(r))
      out << "in " << std::string(r.channel->mpi_call, strnlen(r.channel->mpi_call, sizeof r.channel->mpi_call))
          << " over every rank, clock " << us(horizon(const_cast<Rank&>(r)));
    else if (r.floating)
      out << "polling memory (a helper thread, taken to wait for its node's memory or its "
             "rank's other threads), clock " << us(std::max(horizon(const_cast<Rank&>(r)), r.float_floor))
          << last_work(r);
    else
      out << "running, clock at least " << us(horizon(const_cast<Rank&>(r))) << last_work(r);
    out << "\n";
  }
}

// ---- What running ranks do ---------------------------------------------------

// What a running lane did last, as its thread wrote it (lib/src/rt/rt_meter.c;
// the rank's word, only ever printed): the library call it entered last, and
// whether it is inside the libraries or outside since, with the host CPU time
// its thread used since it left them.
std::string Frontend::last_work(const Rank& r) const {
  char call[sizeof r.channel->last_call];
  std::memcpy(call, const_cast<const char*>(r.channel->last_call), sizeof call);
  call[sizeof call - 1] = '\0';
  for (char* c = call; *c; c++)
    if (!std::isprint(static_cast<unsigned char>(*c))) *c = '?';
  const int64_t left = p2_ld(&r.channel->left_cpu_ns);
  std::ostringstream s;
  if (left < 0) {
    s << "; inside " << (call[0] ? call : std::string("a library call"))
      << ", in no modelled wait";
    return s.str();
  }
  s << "; in the program's own code since it left " << (call[0] ? call : std::string("the libraries"));
  const int64_t now = thread_cpu_ns(r);
  if (now >= left) {
    char cpu[48];
    std::snprintf(cpu, sizeof cpu, ", %.3f s of host CPU time since", static_cast<double>(now - left) * 1e-9);
    s << cpu;
  }
  return s.str();
}

void Frontend::explain_stall(std::ostream& out) const {
  for (const Rank& r : ranks_)
    if (r.attached && !r.done && r.empty_polls) {
      out << "p2sim: the ranks poll their boards' notification tables (tcaDMAUseNotifyInternal),\n"
             "  which stay empty, and nothing else in the job moves: no notification is on its\n"
             "  way to them (simulated time advances only by the polls)\n";
      return;
    }
  bool running_rank = false;
  for (const Rank& r : ranks_)
    if (r.attached && !r.done && !r.waiting && !r.parked &&
        (r.queue.empty() || !p2_chan_op_blocks(r.queue.back().op)))
      running_rank = true;
  if (!running_rank) return;
  if (clock_ == P2_CLOCK_CPU)
    out << "p2sim: a running rank moves simulated time only while it uses CPU: one asleep outside\n"
           "  the libraries (sleep, I/O, a wait in another library) holds it for every rank\n";
  else
    out << "p2sim: a running rank holds simulated time at its clock until it next calls the\n"
           "  libraries: under --clock=" << (clock_ == P2_CLOCK_MODEL ? "model" : "instructions")
        << " its own computation between calls takes no modelled time as it\n"
           "  runs, so a rank's thread spinning on memory for what another rank or the network\n"
           "  will write there waits forever (--clock cpu runs such programs; under --clock=model\n"
           "  only a helper thread whose rank's other threads all wait is followed as it polls),\n"
           "  and one computing for longer than --stall needs a larger --stall (0: never end the\n"
           "  job this way)\n";
}

// ---- The program's own work -----------------------------------------------------

ProgramWork Frontend::program_work() const {
  ProgramWork w;
  w.clock = clock_ == P2_CLOCK_CPU ? "cpu" : clock_ == P2_CLOCK_INSTRUCTIONS ? "instructions" : "model";
  w.answers = answers_;
  w.answered_at_stamp = answered_at_stamp_;
  w.decided_when_asked = decided_when_asked_;
  unsigned nranks = 0;
  for (const Rank& r : ranks_) nranks = std::max(nranks, r.owner + 1);
  w.rank_cpu_s.assign(nranks, 0.0);
  for (const Rank& r : ranks_) {
    // The ranks' own counts (never believed for a simulated time): a count
    // no thread can have reached in a day is dropped, not summed.
    uint64_t ns = p2_ld(&r.channel->program_cpu_ns);
    // A lane still in the program's own code (a job that ends before its
    // ranks: a stall, a timeout) has spent more than it counted so far.
    const int64_t left = p2_ld(&r.channel->left_cpu_ns);
    if (r.attached && !r.done && left >= 0) {
      const int64_t now = thread_cpu_ns(r);
      if (now > left) ns += static_cast<uint64_t>(now - left);
    }
    if (ns < 86400ull * 1000000000ull) w.rank_cpu_s[r.owner] += static_cast<double>(ns) * 1e-9;
    if (clock_ == P2_CLOCK_INSTRUCTIONS) w.instructions += p2_ld(&r.channel->program_instr);
  }
  double total = 0;
  for (double c : w.rank_cpu_s) total += c;
  if (clock_ == P2_CLOCK_CPU) w.charged_s = total;
  if (clock_ == P2_CLOCK_INSTRUCTIONS)
    w.charged_s = static_cast<double>(w.instructions) / job_->rank_params.instructions_per_ns * 1e-9;
  return w;
}

// A host time for a report: "1.234 s", "12.345 ms", "87 us".
static std::string host_seconds(double s) {
  char buf[48];
  if (s >= 1)
    std::snprintf(buf, sizeof buf, "%.3f s", s);
  else if (s >= 1e-3)
    std::snprintf(buf, sizeof buf, "%.3f ms", s * 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.0f us", s * 1e6);
  return buf;
}

void Frontend::report_program_work(std::ostream& out) const {
  const ProgramWork w = program_work();
  if (w.rank_cpu_s.empty()) return;
  double total = 0;
  size_t most = 0;
  for (size_t i = 0; i < w.rank_cpu_s.size(); i++) {
    total += w.rank_cpu_s[i];
    if (w.rank_cpu_s[i] > w.rank_cpu_s[most]) most = i;
  }
  // One line, written at once: the ranks may still be printing as they exit.
  std::ostringstream s;
  s << "p2sim: the ranks' own code outside the libraries used " << host_seconds(total)
    << " of host CPU time (rank " << most << " the most, " << host_seconds(w.rank_cpu_s[most])
    << ")";
  if (clock_ == P2_CLOCK_MODEL) {
    s << ", which --clock=model does not charge: simulated times leave it out "
         "(--clock instructions or cpu charge it)\n";
  } else if (clock_ == P2_CLOCK_CPU) {
    s << ", charged to their clocks (--clock=cpu)\n";
  } else {
    char part[160];
    std::snprintf(part, sizeof part,
                  "; --clock=instructions charged its %.6g user-mode instructions at %g per ns: ",
                  static_cast<double>(w.instructions), job_->rank_params.instructions_per_ns);
    s << part << host_seconds(w.charged_s) << " of simulated time\n";
  }
  out << s.str() << std::flush;
}

}  // namespace p2
