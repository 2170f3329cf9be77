// frontend_admit.cc - request admission (frontend.h): drains each rank's
// ring into its queue, checking every field a rank wrote before the model
// sees it (a rank that breaks the channel's protocol ends the job, named),
// notices reaped ranks and thread lanes taken. The loop (frontend.cc) calls
// poll_ranks() once per turn. Depends on the channel (emu/channel.h).
#include "sim/frontend.h"

#include <algorithm>
#include <cstring>
#include <iostream>
#include <string>

#include <fcntl.h>
#include <unistd.h>

#include "shm_guard.h"

namespace p2 {

// ---- Ranks ---------------------------------------------------------------

Frontend::Rank& Frontend::lane_of(unsigned rank, unsigned lane) {
  return ranks_[lane == 0 ? rank : nranks_ + rank * (P2_RANK_LANES - 1) + (lane - 1)];
}

void Frontend::fault(const Rank& r, const std::string& field, const std::string& why) {
  if (faulted_) return;
  faulted_ = true;
  // Zero pages stand in for a shrunk segment: blame the shrinking, not the zeros.
  if (p2_shm_guard_lost()) return;
  std::cerr << "p2sim: " << name(r) << " (node " << r.node
            << (r.pid ? ", pid " + std::to_string(r.pid) : std::string())
            << ") broke the simulator's channel protocol: " << field << " " << why
            << "; ending the job at simulated time " << us(now_ps()) << "\n";
}

bool Frontend::admit(Rank& r, Request& q, uint64_t index) {
  // Built only for a message: this runs for every request.
  auto of = [&](const char* field) {
    return std::string(field) + " of request " + std::to_string(index) + " (op " +
           std::to_string(q.op) + ")";
  };
  switch (q.op) {
    case P2_CHAN_MMIO_WRITE:
    case P2_CHAN_MMIO_READ:
    case P2_CHAN_BAR_WRITE:
    case P2_CHAN_WAIT_REG:
      if (q.dev >= cluster_.device_count()) {
        fault(r, of("dev"), "is " + std::to_string(q.dev) + ", but the node has " +
                                    std::to_string(cluster_.device_count()) + " device(s)");
        return false;
      }
      break;
    case P2_CHAN_WAIT_MEM:
      if (q.flags & P2_CHAN_WAIT_ALSO) {
        if (!(q.flags & P2_CHAN_WAIT_BLOCK)) {
          fault(r, of("flags"), "ask a test on two words; only a blocking wait has a second one");
          return false;
        }
        if (q.also_rank >= nranks_) {
          fault(r, of("also_rank"), "is " + std::to_string(q.also_rank) + ", but the job has " +
                                        std::to_string(nranks_) + " ranks");
          return false;
        }
        q.also_node = lane_of(q.also_rank, 0).node;
      }
      break;
    case P2_CHAN_EXIT:
    case P2_CHAN_GPU_REGISTER:
    case P2_CHAN_GPU_UNREGISTER:
      break;
    case P2_CHAN_LOCK:
    case P2_CHAN_UNLOCK:
      if (q.a != 0) {
        fault(r, of("lock (a)"), "is " + std::to_string(q.a) + "; a rank has one lock, 0");
        return false;
      }
      break;
    case P2_CHAN_UNPARK:
      if (q.a >= P2_RANK_LANES) {
        fault(r, of("lane (a)"), "is " + std::to_string(q.a) + "; a rank has " +
                                         std::to_string(P2_RANK_LANES));
        return false;
      }
      break;
    default:
      fault(r, of("op"), "is no channel operation");
      return false;
  }
  const uint64_t limit = P2_CHAN_MAX_STAMP_PS;
  if (q.stamp > limit) {
    fault(r, of("stamp_ps"), "is " + std::to_string(q.stamp) + " ps, past the latest time a rank may reach (" +
                                    stamp_limit() + ")");
    return false;
  }
  if (q.deadline != kNever && q.deadline > limit) {
    fault(r, of("deadline"), "is " + std::to_string(q.deadline) + " ps, past " + stamp_limit());
    return false;
  }
  // A poller's requests come no earlier than the change it reacts to
  // (frontend.h, "Pollers"), though its runtime may not have read it yet.
  q.stamp = std::max(q.stamp, r.react_floor);
  if (q.stamp < r.last_stamp) {
    // Only --clock=cpu can race like this (a rank's CPU clock read by us
    // before its own read); keep each rank's stamps in order. Under the
    // model and instructions clocks no library call sends one.
    if (clock_ != P2_CLOCK_CPU) {
      fault(r, of("stamp_ps"), "is " + us(q.stamp) + ", before its previous request's " +
                                      us(r.last_stamp));
      return false;
    }
    q.stamp = r.last_stamp;
  }
  return true;
}

void Frontend::poll_ranks() {
  const bool shutdown = p2_ld(&job_->shutdown) != 0;
  for (unsigned i : live_) {
    Rank& r = ranks_[i];
    if (r.done || faulted_) continue;
    // What follows a thread's EXIT in its lane's ring is the next thread's
    // session, drained once that session has an entry of its own.
    if (r.lane > 0 && !r.queue.empty() && r.queue.back().op == P2_CHAN_EXIT) continue;
    // Read "reaped" before draining: once the process is gone its ring is final.
    if (!r.reaped && (shutdown || p2_ld(&lane_of(r.owner, 0).channel->reaped))) r.reaped = true;
    if (!r.attached && p2_ld(&r.channel->state) >= P2_RANK_ATTACHED) {
      r.attached = true;
      r.pid = p2_ld(&r.channel->pid);
    }
    if (clock_ == P2_CLOCK_CPU && r.attached && r.cpu_fd < 0 && p2_ld(&r.channel->tid) != 0) {
      // Another process's thread clock cannot be read with clock_gettime;
      // its scheduler statistics can (they lag a running thread by up to a
      // tick, which only holds simulated time back, never runs it ahead).
      std::string path = "/proc/" + std::to_string(r.pid) + "/task/" +
                         std::to_string(p2_ld(&r.channel->tid)) + "/schedstat";
      r.cpu_fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    }
    // The ring's slots and head are the rank's to write: each field is
    // read once, into our own copy, and checked there.
    const uint64_t head = p2_ld(&r.channel->req_head);
    if (head - r.tail > P2_CHAN_SLOTS) {
      fault(r, "req_head", "is " + std::to_string(head) + " with " + std::to_string(r.tail) +
                               " requests consumed, more than the ring's " +
                               std::to_string(P2_CHAN_SLOTS) + " slots ahead");
      return;
    }
    const uint64_t first = r.tail;
    while (r.tail != head) {
      const p2_chan_req* in = p2_chan_slot(r.channel, r.tail);
      Request q;
      q.op = in->op;
      q.seq = in->seq;
      q.flags = in->flags;
      q.dev = in->dev;
      q.bar = in->bar;
      q.stamp = in->stamp_ps;
      q.a = in->a;
      q.b = in->b;
      q.c = in->c;
      if (q.op == P2_CHAN_BAR_WRITE || q.op == P2_CHAN_GPU_REGISTER) {
        uint32_t len = in->len;
        if (len > P2_CHAN_DATA_BYTES) {
          fault(r, "len of request " + std::to_string(r.tail), "is " + std::to_string(len) +
                                                                  " bytes; a request carries " +
                                                                  std::to_string(P2_CHAN_DATA_BYTES));
          return;
        }
        q.data.assign(in->data, in->data + len);
      }
      if (q.op == P2_CHAN_WAIT_MEM && (q.flags & P2_CHAN_WAIT_BLOCK)) {
        p2_chan_wait_data d;
        std::memcpy(&d, in->data, sizeof d);
        if (q.flags & P2_CHAN_WAIT_DEADLINE) q.deadline = d.deadline_ps;
        if (q.flags & P2_CHAN_WAIT_ALSO) {
          q.also_rank = d.also_rank;
          q.also_a = d.also_a;
          q.also_b = d.also_b;
          q.also_c = d.also_c;
        }
      }
      if (!admit(r, q, r.tail)) return;
      q.admitted_at = now_ps();
      // A poller that calls runs as any lane; its rank's pollers may see
      // what this lane did (frontend.h, "Pollers").
      r.floating = r.settling = false;
      for (unsigned k = 0; any_floating_ && k < P2_RANK_LANES; k++) {
        Rank& sibling = lane_of(r.owner, k);
        if (sibling.floating && &sibling != &r) unsettle(sibling, q.stamp);
      }
      r.tail++;
      requests_seen_++;
      r.last_stamp = q.stamp;
      const bool exit = q.op == P2_CHAN_EXIT;
      r.queue.push_back(std::move(q));
      if (exit && r.lane > 0) break;
    }
    if (r.tail != first) p2_chan_consumed(r.channel, r.tail);
    if (r.reaped) {
      // The process is gone: what it posted still happens, but nobody is left
      // to answer.
      r.queue.erase(std::remove_if(r.queue.begin(), r.queue.end(),
                                   [](const Request& q) { return p2_chan_op_blocks(q.op); }),
                    r.queue.end());
      if (r.waiting) {
        r.waiting = false;
        waiting_--;
      }
      if (r.queue.empty()) {
        r.done = true;
        r.done_at = now_ps();
        live_stale_ = true;
      }
    }
  }
  // Threads take lanes rarely: look for new ones only when the count moved,
  // and after the rings: a request its creator pushed after taking a lane is
  // drained only with the lane in view, so the model never runs past the
  // clock the new thread starts at. A thread may take a lane whose last
  // thread's EXIT is not drained yet (it was pushed before the lane was
  // free): looked at again next turn.
  const uint32_t taken = p2_ld_sc(&job_->lanes_taken);
  if (taken == lanes_taken_) return;
  bool pending = false;
  for (unsigned i = nranks_; i < nranks_ * P2_RANK_LANES; i++) {
    Rank& r = ranks_[i];
    if (r.reaped || p2_ld(&r.channel->lane_claims) == r.claims) continue;
    if (r.done)
      start_session(r);
    else if (!r.queue.empty() && r.queue.back().op == P2_CHAN_EXIT)
      retire_ended_session(r);
    else
      pending = true;
  }
  if (!pending) lanes_taken_ = taken;
}

// A thread took the lane: it starts at its creator's clock.
void Frontend::start_session(Rank& r) {
  Rank fresh;
  fresh.index = r.index;
  fresh.order = r.order;
  fresh.node = r.node;
  fresh.owner = r.owner;
  fresh.lane = r.lane;
  fresh.channel = r.channel;
  fresh.claims = p2_ld(&r.channel->lane_claims);
  fresh.unparked_seq = p2_ld(&r.channel->parked_seq);
  fresh.attached = true;
  fresh.pid = ranks_[r.owner].pid;
  fresh.tail = r.tail;  // the lane's ring goes on counting
  int64_t start = p2_ld(&r.channel->clock_floor);
  if (start > 0 && static_cast<uint64_t>(start) > P2_CHAN_MAX_STAMP_PS) {
    fault(fresh, "clock_floor", "is " + std::to_string(start) + " ps, past " + stamp_limit());
    return;
  }
  fresh.answer_floor = start > 0 ? static_cast<uint64_t>(start) : 0;
  if (r.cpu_fd >= 0) close(r.cpu_fd);
  r = std::move(fresh);
  live_stale_ = true;
}

// The ended session keeps what it has left to run (its last requests and
// EXIT, at their stamps, in their order), so the next thread's requests, which
// may be stamped earlier, run at their own times whenever the simulator
// learns of either: the lane is free as soon as its thread has ended. A
// session with an EXIT queued waits for nothing and holds no time back, and
// may hold its rank's lock (an UNLOCK queued before the EXIT): the lock goes
// with it.
void Frontend::retire_ended_session(Rank& r) {
  unsigned spare = static_cast<unsigned>(ranks_.size());
  for (unsigned i = nranks_ * P2_RANK_LANES; i < ranks_.size(); i++)
    if (ranks_[i].done && ranks_[i].queue.empty() && !ranks_[i].waiting) {
      spare = i;
      break;
    }
  if (spare == ranks_.size()) ranks_.emplace_back();
  Rank& old = ranks_[spare];
  old = std::move(r);
  old.index = spare;
  if (old.cpu_fd >= 0) close(old.cpu_fd);  // the ended thread's CPU time counts no more
  old.cpu_fd = r.cpu_fd = -1;
  RankLock& l = locks_[old.owner];
  if (l.holder == r.index) l.holder = spare;
  r.queue.clear();
  start_session(r);
  live_stale_ = true;
}

}  // namespace p2
