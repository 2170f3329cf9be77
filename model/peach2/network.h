// network.h - PEACH2 as one of the cluster's networks: a board in every
// node, its N port in the host's slot, E/W/S cabled as the topology says, the
// routing tables loaded; and each board as the NodeDevice the front end
// serves (its BAR0 registers and BAR2 PIO window, reached through the host's
// root complex).
#pragma once

#include <memory>
#include <vector>

#include "host/host.h"
#include "peach2/chip.h"
#include "sim/network.h"
#include "topo/topology.h"

namespace p2 {

class Peach2Device : public NodeDevice {
 public:
  Peach2Device(Host& host, Peach2& chip) : host_(host), chip_(chip) {}
  const char* kind() const override { return "peach2"; }
  bool access_ok(unsigned bar, uint64_t offset, uint64_t len) const override;
  void mmio_write(unsigned bar, uint64_t offset, uint64_t value) override;
  void mmio_read(unsigned bar, uint64_t offset,
                 std::function<void(uint64_t value, bool ok)> done) override;
  void bar_write(unsigned bar, uint64_t offset, const uint8_t* data, uint32_t len) override;
  uint64_t peek(unsigned bar, uint64_t offset) const override;
  void set_change_observer(std::function<void()> f) override;
  bool empty_poll(unsigned bar, uint64_t offset, uint64_t value) const override {
    return bar == P2_BAR_REGS && (offset == P2_REG_NOTIFY_POP || offset == P2_REG_NOTIFY_PEEK) &&
           (value & P2_NOTIFY_SERIAL_MASK) == 0;
  }
  std::string describe(unsigned bar, uint64_t offset) const override;
  std::string describe_memory_wait(uint64_t addr, uint64_t mask, uint64_t value) const override;

 private:
  Host& host_;
  Peach2& chip_;
};

class Peach2Network : public Network {
 public:
  // Throws ConfigError on a bad topology.
  Peach2Network(const Topology& topo, const Params& params, RoutingPolicy policy,
                std::vector<std::unique_ptr<Host>>& hosts);
  ~Peach2Network() override;

  const char* kind() const override { return "peach2"; }
  NodeDevice& device(unsigned node) override { return *devices_[node]; }
  std::vector<PcieLink*> links() const override;
  uint64_t tlps_created() const override;
  void write_node_table(std::ostream& out) const override;
  void write_node_json(std::ostream& out, unsigned node) const override;
  std::string describe_stall() override;
  void set_traffic_observer(TrafficObserver* observer) override;

  Peach2& chip(unsigned n) { return *chips_[n]; }
  const RouteTable& routes() const { return routes_; }

 private:
  RouteTable routes_;
  std::vector<std::unique_ptr<Peach2>> chips_;
  std::vector<std::unique_ptr<PcieLink>> links_;
  std::vector<std::unique_ptr<Peach2Device>> devices_;
  std::vector<Host*> hosts_;

  // The smallest max payload size on the route from one board to another's host.
  uint32_t path_max_payload(const Topology& topo, const Params& params, unsigned from,
                            unsigned to) const;
};

}  // namespace p2
