#include "peach2/chip.h"

#include "peach2/dmac.h"
#include "peach2/pio_window.h"
#include "peach2/registers.h"
#include "peach2/router.h"

namespace p2 {

Peach2::Peach2(sc_core::sc_module_name name, unsigned node, unsigned nnodes, ChipConfig config)
    : sc_module(name), node_(node), config_(std::move(config)) {
  router_ = std::make_unique<Router>("router", node, nnodes, config_);
  regs_ = std::make_unique<Registers>("regs", node, nnodes, config_, *router_);
  dmac_ = std::make_unique<Dmac>("dmac", node, nnodes, config_, *router_, *regs_);
  pio_ = std::make_unique<PioWindow>("pio", nnodes, config_, *router_);
  regs_->set_dmac(dmac_.get());
  router_->attach_sink(Xbar::Regs, regs_.get());
  router_->attach_sink(Xbar::Dmac, dmac_.get());
  router_->attach_sink(Xbar::Pio, pio_.get());
}

Peach2::~Peach2() = default;

void Peach2::attach(p2_port p, LinkPort& end) {
  router_->attach_link(p, end);
  if (end.kind() == LinkEndKind::RootComplex) port_modes_ |= 1u << p;
  regs_->set_port_modes(port_modes_);
}

void Peach2::set_route(unsigned dest, p2_port p) { router_->set_route(dest, p); }

uint64_t Peach2::reg_peek(uint64_t offset) const { return regs_->read(offset); }

void Peach2::set_change_observer(std::function<void()> f) { regs_->set_change_observer(std::move(f)); }

}  // namespace p2
