#include "peach2/pio_window.h"

#include "peach2_hw.h"

namespace p2 {

PioWindow::PioWindow(sc_core::sc_module_name name, unsigned nnodes, const ChipConfig& config,
                     Router& router)
    : sc_module(name), nnodes_(nnodes), config_(config.pio), clock_(config.chip_mhz), router_(router) {
  stage_.on_due([this] { on_translated(); });
}

void PioWindow::accept(TlpPtr tlp) {
  sc_core::sc_time now = sim_time();
  stage_.push(now + clock_.cycles(config_.translate_cycles),
              std::move(tlp));
}

void PioWindow::on_translated() {
  while (stage_.head_due()) {
    TlpPtr tlp = stage_.pop();
    uint64_t offset = p2_bar_offset(tlp->addr, P2_WIN_PIO);
    uint64_t target = p2_pio_target(offset);
    // A store past the last node's span goes nowhere; one that runs over the
    // end of a node's span (or of the window) would land past what PIO may
    // reach on that node: dropped too. Compared without forming offset + len.
    const uint64_t in_span = offset % P2_PIO_NODE_SPAN;
    if (p2_addr_node(target) >= nnodes_ || offset >= P2_PIO_SIZE ||
        tlp->length > P2_PIO_NODE_SPAN - in_span) {
      ++dropped_;
      continue;
    }
    ++stores_;
    if (traffic_ && p2_addr_node(target) != node_)
      traffic_->on_transfer(node_, p2_addr_node(target), tlp->length, "peach2", "cpu", "host");
    tlp->addr = target;
    router_.inject(Xbar::Pio, std::move(tlp));
  }
}

}  // namespace p2
