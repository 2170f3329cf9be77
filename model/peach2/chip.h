// chip.h - one PEACH2 board: four PCIe ports (N to the host, E, W, S to the
// neighbours), the router, the register block, the PIO window and the DMA
// controller. See model/README.md for what each unit does per TLP.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>

#include <systemc>

#include "peach2_hw.h"
#include "pcie/link.h"
#include "peach2/config.h"

namespace p2 {

class Router;
class Registers;
class Dmac;
class PioWindow;

class Peach2 : public sc_core::sc_module {
 public:
  Peach2(sc_core::sc_module_name name, unsigned node, unsigned nnodes, ChipConfig config);
  ~Peach2() override;

  // Binds port `p` to a link end; the end's kind (RC/EP) becomes the port's mode.
  void attach(p2_port p, LinkPort& link_end);
  void set_route(unsigned dest, p2_port p);

  // Instant views for the emulator's waits and for tests; no simulated cost.
  uint64_t reg_peek(uint64_t offset) const;
  // Called whenever a DMA channel's status changes.
  void set_change_observer(std::function<void()> f);

  unsigned node() const { return node_; }
  Router& router() { return *router_; }
  Registers& registers() { return *regs_; }
  Dmac& dmac() { return *dmac_; }
  PioWindow& pio() { return *pio_; }

 private:
  unsigned node_;
  ChipConfig config_;  // the units keep references into it
  std::unique_ptr<Registers> regs_;
  std::unique_ptr<Router> router_;
  std::unique_ptr<Dmac> dmac_;
  std::unique_ptr<PioWindow> pio_;
  uint64_t port_modes_ = 0;
};

}  // namespace p2
