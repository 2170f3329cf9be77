// pio_window.h - the PIO window (BAR2). Per TLP: a CPU store into the window
// is rewritten, pio_translate_cycles later, into a write to the remote node's
// host memory the window offset selects (peach2_hw.h: p2_pio_target) and
// handed back to the crossbar to be routed like any write.
#pragma once

#include <systemc>

#include "core/traffic.h"
#include "peach2/router.h"
#include "core/clock.h"
#include "peach2/config.h"
#include "core/timed_queue.h"

namespace p2 {

class PioWindow : public sc_core::sc_module, public TlpSink {
 public:
  PioWindow(sc_core::sc_module_name name, unsigned nnodes, const ChipConfig& config, Router& router);
  void accept(TlpPtr tlp) override;
  uint64_t stores() const { return stores_; }
  uint64_t dropped() const { return dropped_; }
  // Each store forwarded to another node is a transfer from `node`.
  void set_traffic_observer(TrafficObserver* observer, unsigned node) {
    traffic_ = observer;
    node_ = node;
  }

 private:
  void on_translated();
  unsigned nnodes_;
  const PioWindowConfig& config_;
  ChipClock clock_;
  Router& router_;
  TimedQueue<TlpPtr> stage_;
  uint64_t stores_ = 0, dropped_ = 0;
  TrafficObserver* traffic_ = nullptr;
  unsigned node_ = 0;
};

}  // namespace p2
