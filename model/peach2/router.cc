#include "peach2/router.h"

#include <cassert>

namespace p2 {

using sc_core::sc_time;

const char* xbar_name(Xbar x) {
  switch (x) {
    case Xbar::N: return "N";
    case Xbar::E: return "E";
    case Xbar::W: return "W";
    case Xbar::S: return "S";
    case Xbar::Regs: return "regs";
    case Xbar::Pio: return "pio";
    case Xbar::Dmac: return "dmac";
    case Xbar::Count: break;
  }
  return "?";
}

Router::Router(sc_core::sc_module_name name, unsigned node, unsigned nnodes, const ChipConfig& config)
    : sc_module(name), node_(node), nnodes_(nnodes), config_(config.router), clock_(config.chip_mhz) {
  routes_.fill(P2_PORT_N);
  arbitrate_wake_.bind([this] { arbitrate(); });
  for (Output& out : outputs_) out.pipeline.on_due([this] { deliver(); });
}

void Router::attach_link(p2_port p, LinkPort& end) {
  inputs_[p].link = &end;
  outputs_[p].link = &end;
  end.attach(this, static_cast<size_t>(config_.output_queue_tlps));
}

void Router::attach_sink(Xbar x, TlpSink* sink) { outputs_[static_cast<int>(x)].sink = sink; }

void Router::tlp_arrived(LinkPort& port, TlpPtr tlp) {
  for (int p = 0; p < P2_PORT_COUNT; ++p) {
    if (inputs_[p].link == &port) {
      inject(static_cast<Xbar>(p), std::move(tlp));
      return;
    }
  }
  assert(!"TLP from a link not attached to this router");
}

void Router::tx_space(LinkPort&) { wake(sim_time()); }

void Router::inject(Xbar from, TlpPtr tlp) {
  Input& in = inputs_[static_cast<int>(from)];
  ++stats_.tlps_in[static_cast<int>(from)];
  in.queue.push_back(std::move(tlp));
  if (in.queue.size() == 1) wake(sim_time());
}

void Router::wake(sc_time at) {
  // Decisions happen on clock edges.
  sc_time edge = clock_.edge_at_or_after(at);
  arbitrate_wake_.notify(edge - sim_time());
}

Xbar Router::route_to(unsigned dest) const {
  // A node of another PEACH2 network: nowhere to send it.
  return routes_[dest] == P2_ROUTE_NONE ? Xbar::Count : xbar_of(routes_[dest]);
}

unsigned Router::dest_node(const Tlp& tlp) const {
  return tlp.kind == TlpKind::Completion ? requester_node(tlp.requester) : p2_addr_node(tlp.addr);
}

Xbar Router::decide(const Tlp& tlp) const {
  if (tlp.kind == TlpKind::Completion) {
    unsigned dest = requester_node(tlp.requester);
    if (dest >= nnodes_) return Xbar::Count;
    if (dest != node_) return route_to(dest);
    switch (requester_function(tlp.requester)) {
      case Function::Dmac: return Xbar::Dmac;
      case Function::Chip: return Xbar::Regs;
      case Function::Host: return Xbar::N;
      case Function::Hca: return Xbar::Count;  // the HCA's reads never cross PEACH2
    }
    return Xbar::Count;
  }
  unsigned dest = p2_addr_node(tlp.addr);
  if (dest >= nnodes_) return Xbar::Count;
  if (dest != node_) return route_to(dest);
  switch (p2_addr_window(tlp.addr)) {
    case P2_WIN_HOST:
    case P2_WIN_GPU: return Xbar::N;
    case P2_WIN_REGS: return Xbar::Regs;
    case P2_WIN_PIO: return tlp.kind == TlpKind::MemWrite ? Xbar::Pio : Xbar::Count;
    case P2_WIN_NONE: break;
  }
  return Xbar::Count;
}

Xbar Router::head_output(Xbar in) const {
  const Input& i = inputs_[static_cast<int>(in)];
  return i.queue.empty() ? Xbar::Count : decide(*i.queue.front());
}

bool Router::has_room(const Output& out, size_t extra) const {
  if (!out.link) return true;  // internal units take whatever arrives
  return out.pipeline.size() + out.link->tx_queued() + extra <
         static_cast<size_t>(config_.output_queue_tlps);
}

size_t Router::bubble(int in, int out) const {
  // Bubble flow control: a TLP that enters a ring must leave room for one
  // that is already on it, so the ring's buffers can never all fill; one
  // going on along the ring needs room for itself only.
  const int e = static_cast<int>(Xbar::E), w = static_cast<int>(Xbar::W);
  if (out != e && out != w) return 0;
  if ((in == w && out == e) || (in == e && out == w)) return 0;
  return config_.ring_bubble_tlps;
}

void Router::answer_unsupported(const Tlp& read) {
  TlpPtr cpl = make_completion(read, CplStatus::UnsupportedRequest);
  cpl->born = sim_time();
  ++stats_.unsupported_reads;
  inject(Xbar::Regs, std::move(cpl));
}

void Router::arbitrate() {
  const sc_time now = sim_time();
  sc_time next_wake = sc_core::SC_ZERO_TIME;
  auto want_wake = [&](sc_time t) {
    if (next_wake == sc_core::SC_ZERO_TIME || t < next_wake) next_wake = t;
  };

  // Heads nobody can take are dropped (writes) or answered (reads) first, so
  // they never block their input.
  for (int i = 0; i < kXbarPorts; ++i) {
    Input& in = inputs_[i];
    while (!in.queue.empty() && decide(*in.queue.front()) == Xbar::Count) {
      TlpPtr tlp = std::move(in.queue.front());
      in.queue.pop_front();
      if (in.link) in.link->release(*tlp);
      if (forward_listener_[i]) forward_listener_[i](*tlp);
      const unsigned dest = dest_node(*tlp);
      if (unroutable_ && dest < nnodes_ && dest != node_ && routes_[dest] == P2_ROUTE_NONE)
        unroutable_(*tlp, dest);
      if (tlp->kind == TlpKind::MemRead)
        answer_unsupported(*tlp);
      else
        ++stats_.dropped_writes;
    }
  }

  // Each input's head output, decoded once per arbitration (the loop below
  // asks for every (output, input) pair): only a move changes one.
  // `wanted`: the outputs some head goes to (an output no head wants is
  // skipped, after its own wake-up).
  // `heads_to[o]`: a bit per input whose head goes to output o (an output no
  // head wants is skipped, after its own wake-up).
  std::array<unsigned, kXbarPorts + 1> heads_to{};
  for (int i = 0; i < kXbarPorts; ++i) {
    heads_to[static_cast<int>(head_output(static_cast<Xbar>(i)))] |= 1u << i;
  }
  constexpr unsigned kAllInputs = (1u << kXbarPorts) - 1;

  for (int o = 0; o < kXbarPorts; ++o) {
    Output& out = outputs_[o];
    if (!heads_to[o]) continue;  // a busy one wakes no one either
    if (out.free > now) {
      want_wake(out.free);
      continue;
    }
    // Round-robin over the inputs whose head goes to this output and fits
    // (with the ring's bubble for a TLP entering the ring here): the bits of
    // heads_to[o] rotated to start at next_input.
    int chosen = -1;
    bool waiting = false;
    const unsigned start = static_cast<unsigned>(out.next_input);
    for (unsigned turn = ((heads_to[o] >> start) | (heads_to[o] << (kXbarPorts - start))) & kAllInputs;
         turn; turn &= turn - 1) {
      const int i = static_cast<int>((start + static_cast<unsigned>(__builtin_ctz(turn))) % kXbarPorts);
      Input& in = inputs_[i];
      if (in.free > now) {
        want_wake(in.free);
        continue;
      }
      waiting = true;
      if (!has_room(out, bubble(i, o))) continue;
      chosen = i;
      break;
    }
    if (!waiting) continue;
    if (chosen < 0) {
      if (out.link) out.link->notify_space();  // a TLP entering the ring waits for its bubble
      if (!out.stalled) {
        out.stalled = true;
        out.stalled_since = now;
      }
      continue;  // tx_space() wakes us
    }
    if (out.stalled) {
      stats_.output_stall[o] += now - out.stalled_since;
      out.stalled = false;
    }

    Input& in = inputs_[chosen];
    TlpPtr tlp = std::move(in.queue.front());
    in.queue.pop_front();
    heads_to[o] &= ~(1u << chosen);
    heads_to[static_cast<int>(head_output(static_cast<Xbar>(chosen)))] |= 1u << chosen;
    if (in.link) in.link->release(*tlp);
    if (forward_listener_[chosen]) forward_listener_[chosen](*tlp);

    uint32_t bytes = tlp->header_bytes() + tlp->payload_bytes();
    uint64_t xfer = (bytes + config_.datapath_bytes - 1) / config_.datapath_bytes;
    sc_time busy = clock_.cycles(xfer);
    in.free = now + busy;
    out.free = now + busy;
    stats_.output_busy[o] += busy;
    ++stats_.tlps_out[o];
    stats_.bytes_out[o] += tlp->payload_bytes();
    out.next_input = (chosen + 1) % kXbarPorts;
    out.pipeline.push(now + clock_.cycles(config_.route_pipeline_cycles + xfer),
                      std::move(tlp));
    // The output's next move is due when it frees, if a head waits for it
    // (a head that comes later wakes the crossbar itself).
    if (heads_to[o]) want_wake(out.free);
    if (!in.queue.empty()) want_wake(in.free);
  }
  if (next_wake != sc_core::SC_ZERO_TIME) wake(next_wake);
}

// A delivery changes nothing arbitration looks at (a TLP moves from the
// output's pipeline to its link's queue, and has_room counts both), so it
// wakes no arbitration.
void Router::deliver() {
  for (Output& out : outputs_) {
    while (out.pipeline.head_due()) {
      TlpPtr tlp = out.pipeline.pop();
      if (out.link)
        out.link->send(std::move(tlp));
      else if (out.sink)
        out.sink->accept(std::move(tlp));
    }
  }
}

}  // namespace p2
