// router.h - the PEACH2 routing unit and crossbar.
//
// Per TLP: it waits in its input's buffer (holding that link's credits) until
// the crossbar moves it to the output the address says (requests: the node
// number in the address, then the window inside this node; completions: the
// requester's node and function). The move takes route_pipeline_cycles plus
// one cycle per datapath_bytes of the TLP, occupies the input and the output
// for the transfer cycles, and only starts while the output has room; the input
// releases its buffer when the move starts. Arbitration is round-robin per
// output, among the inputs whose head fits: on the ring ports (E, W) a TLP
// entering the ring there needs ring_bubble_tlps more room than one going on
// along it (bubble flow control; topologies/README.md, Deadlock freedom).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>

#include <systemc>

#include "peach2_hw.h"
#include "pcie/link.h"
#include "core/clock.h"
#include "peach2/config.h"
#include "core/timed_queue.h"

namespace p2 {

// Inputs and outputs of the crossbar: the four link ports and the chip's
// internal units.
enum class Xbar : uint8_t { N = 0, E, W, S, Regs, Pio, Dmac, Count };
constexpr int kXbarPorts = static_cast<int>(Xbar::Count);
const char* xbar_name(Xbar x);
inline Xbar xbar_of(p2_port p) { return static_cast<Xbar>(p); }

// An internal unit the crossbar delivers to.
class TlpSink {
 public:
  virtual ~TlpSink() = default;
  virtual void accept(TlpPtr tlp) = 0;
};

struct RouterStats {
  std::array<uint64_t, kXbarPorts> tlps_in{}, tlps_out{}, bytes_out{};
  std::array<sc_core::sc_time, kXbarPorts> output_busy{}, output_stall{};
  uint64_t dropped_writes = 0;      // no such node or window
  uint64_t unsupported_reads = 0;   // answered with Unsupported Request
};

class Router : public sc_core::sc_module, public LinkClient {
 public:
  Router(sc_core::sc_module_name name, unsigned node, unsigned nnodes, const ChipConfig& config);

  void attach_link(p2_port p, LinkPort& end);
  void attach_sink(Xbar x, TlpSink* sink);
  // An internal unit hands the crossbar a TLP; it queues at input `from`.
  void inject(Xbar from, TlpPtr tlp);
  // Called with each TLP the crossbar takes from internal input `from`.
  void on_forward(Xbar from, std::function<void(const Tlp&)> f) {
    forward_listener_[static_cast<int>(from)] = std::move(f);
  }
  // Called with each TLP refused because its node has no route (P2_ROUTE_NONE:
  // another PEACH2 network) before it is dropped or answered.
  void on_unroutable(std::function<void(const Tlp&, unsigned dest)> f) { unroutable_ = std::move(f); }
  void set_route(unsigned dest, p2_port p) { routes_[dest] = p; }
  p2_port route(unsigned dest) const { return routes_[dest]; }
  const RouterStats& stats() const { return stats_; }
  LinkPort* link(p2_port p) const { return outputs_[p].link; }

  // Instant views for diagnosing a stuck cluster (no simulated cost): TLPs
  // held at input `in`, the output its head TLP goes to (Xbar::Count: none),
  // and whether output `out` refuses TLPs (its queue and link are full).
  size_t input_depth(Xbar in) const { return inputs_[static_cast<int>(in)].queue.size(); }
  Xbar head_output(Xbar in) const;
  bool output_full(Xbar out) const { return !has_room(outputs_[static_cast<int>(out)]); }

  void tlp_arrived(LinkPort& port, TlpPtr tlp) override;
  void tx_space(LinkPort& port) override;

 private:
  struct Input {
    std::deque<TlpPtr> queue;
    LinkPort* link = nullptr;  // nullptr for internal inputs
    sc_core::sc_time free;     // busy moving a TLP until
  };
  struct Output {
    LinkPort* link = nullptr;
    TlpSink* sink = nullptr;
    TimedQueue<TlpPtr> pipeline;  // crossing the crossbar
    sc_core::sc_time free;
    sc_core::sc_time stalled_since;
    bool stalled = false;
    int next_input = 0;  // round-robin pointer
  };

  Xbar decide(const Tlp& tlp) const;
  // The node a TLP is addressed to (a completion: its requester's node).
  unsigned dest_node(const Tlp& tlp) const;
  Xbar route_to(unsigned dest) const;
  bool has_room(const Output& out, size_t extra = 0) const;
  size_t bubble(int in, int out) const;
  void arbitrate();
  void deliver();
  void wake(sc_core::sc_time at);
  void answer_unsupported(const Tlp& read);

  unsigned node_, nnodes_;
  const RouterConfig& config_;
  ChipClock clock_;
  std::array<Input, kXbarPorts> inputs_;
  std::array<Output, kXbarPorts> outputs_;
  std::array<p2_port, P2_MAX_NODES> routes_{};
  std::array<std::function<void(const Tlp&)>, kXbarPorts> forward_listener_;
  std::function<void(const Tlp&, unsigned)> unroutable_;
  Wakeup arbitrate_wake_{Wakeup::Kind::Decision};  // the next edge an arbitration is due
  RouterStats stats_;
};

}  // namespace p2
