// network.h - one interconnect of the cluster: a device in every node and
// what joins them (PEACH2 boards cabled into a torus or ring, a dual-rail
// InfiniBand fabric, the SR8000's crossbars). The cluster builds one Network per
// `device` line of the topology; a new device type is a unit folder plus one
// implementation of this and of NodeDevice.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/traffic.h"
#include "pcie/link.h"

namespace p2 {

class Network {
 public:
  virtual ~Network() = default;
  virtual const char* kind() const = 0;
  virtual NodeDevice& device(unsigned node) = 0;
  // Every PCIe link the network owns (statistics, traces).
  virtual std::vector<PcieLink*> links() const = 0;
  // TLPs the network's own units created (DMA engines, register units).
  virtual uint64_t tlps_created() const = 0;
  // Per-node statistics: a table (one row per node, header first) and, for
  // node n, the members of its JSON object (`"dmac": {...}, ...`, no braces).
  virtual void write_node_table(std::ostream& out) const = 0;
  virtual void write_node_json(std::ostream& out, unsigned node) const = 0;
  // When the simulation stopped with nothing scheduled: why TLPs inside the
  // network can never move (a credit deadlock), in one line; "" if none are
  // stuck there.
  virtual std::string describe_stall() = 0;
  // Tells `observer` (nullptr: no one) of every transfer the network's units
  // start from now on.
  virtual void set_traffic_observer(TrafficObserver* observer) = 0;
};

}  // namespace p2
