// network.h - InfiniBand as one of the cluster's networks: in every node a
// dual-port QDR HCA on its own PCIe Gen3 x8 slot (a second root port of the
// host), port r cabled to rail r's switch; and each HCA as the NodeDevice the
// front end serves (its BAR0 registers, reached through the host's root
// complex at IB_REGS_OFFSET of the node's window).
#pragma once

#include <memory>
#include <vector>

#include "host/host.h"
#include "ib/config.h"
#include "ib/hca.h"
#include "ib/ib_link.h"
#include "ib/switch.h"
#include "sim/network.h"
#include "topo/topology.h"

namespace p2 {

class IbDevice : public NodeDevice {
 public:
  IbDevice(Host& host, Hca& hca) : host_(host), hca_(hca) {}
  const char* kind() const override { return "ib"; }
  bool access_ok(unsigned bar, uint64_t offset, uint64_t len) const override;
  void mmio_write(unsigned bar, uint64_t offset, uint64_t value) override;
  void mmio_read(unsigned bar, uint64_t offset,
                 std::function<void(uint64_t value, bool ok)> done) override;
  void bar_write(unsigned bar, uint64_t offset, const uint8_t* data, uint32_t len) override;
  uint64_t peek(unsigned bar, uint64_t offset) const override;
  void set_change_observer(std::function<void()> f) override;
  std::string describe(unsigned bar, uint64_t offset) const override;
  std::string describe_memory_wait(uint64_t addr, uint64_t mask, uint64_t value) const override;

 private:
  Host& host_;
  Hca& hca_;
};

class IbNetwork : public Network {
 public:
  // Throws ConfigError on a topology of more nodes than a switch serves.
  IbNetwork(const Topology& topo, int line, const Params& params,
            std::vector<std::unique_ptr<Host>>& hosts);
  ~IbNetwork() override;

  const char* kind() const override { return "ib"; }
  NodeDevice& device(unsigned node) override { return *devices_[node]; }
  std::vector<PcieLink*> links() const override;
  uint64_t tlps_created() const override;
  void write_node_table(std::ostream& out) const override;
  void write_node_json(std::ostream& out, unsigned node) const override;
  std::string describe_stall() override;
  void set_traffic_observer(TrafficObserver* observer) override;

  Hca& hca(unsigned n) { return *hcas_[n]; }
  IbSwitch& rail_switch(unsigned rail) { return *switches_[rail]; }
  // The cable of node n's port `rail` (end a: the HCA, end b: the switch).
  IbLink& cable(unsigned n, unsigned rail) { return *cables_[n * IB_PORTS + rail]; }

 private:
  IbConfig config_;
  std::vector<std::unique_ptr<Hca>> hcas_;
  std::vector<std::unique_ptr<PcieLink>> slots_;
  std::vector<std::unique_ptr<IbSwitch>> switches_;
  std::vector<std::unique_ptr<IbLink>> cables_;
  std::vector<std::unique_ptr<IbDevice>> devices_;
};

}  // namespace p2
