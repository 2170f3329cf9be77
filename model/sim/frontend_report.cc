// frontend_report.cc - the front end's diagnoses (frontend.h), printed
// only when a job ends badly or is asked for its state: a rank that shrank
// the job's memory, a deadlock, every rank's state and what it waits for;
// and how times and values read in every message of the front end. Depends
// on the cluster's devices (their register and memory-wait descriptions).
#include "sim/frontend.h"

#include <cinttypes>
#include <cstdio>
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
  if (const char* lost = p2_shm_guard_lost())
    std::cerr << "p2sim: " << lost << " shrank under the simulator (a process of the job "
              << "truncated it); ending the job at simulated time " << us(now_ps()) << "\n";
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
      for (unsigned d = 0; d < cluster.device_count(); d++) {
        std::string what = cluster.device(r.node, d).describe_memory_wait(w.a, w.c, w.b);
        if (!what.empty()) return what;
      }
      s << "memory word " << hex(w.a) << " & " << hex(w.c) << " == " << hex(w.b);
      uint64_t v;
      if (cluster.host(r.node).read(w.a, reinterpret_cast<uint8_t*>(&v), sizeof v))
        s << " (now " << hex(v) << ")";
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
    else if (!r.queue.empty() && p2_chan_op_blocks(r.queue.back().op))
      out << "about to wait for " << describe_wait(r) << " (queued at "
          << us(r.queue.back().stamp) << ")";
    else if (!r.attached)
      out << "not attached to the simulator yet";
    else if (r.parked)
      out << "asleep until another thread of the rank wakes it (pthread_cond_wait or "
             "pthread_join), clock " << us(horizon(const_cast<Rank&>(r)));
    else if (in_world_collective(r))
      out << "in " << std::string(r.channel->mpi_call, strnlen(r.channel->mpi_call, sizeof r.channel->mpi_call))
          << " over every rank, clock " << us(horizon(const_cast<Rank&>(r)));
    else
      out << "running, clock at least " << us(horizon(const_cast<Rank&>(r)));
    out << "\n";
  }
}

}  // namespace p2
