// network.h - the Hitachi SR8000 as one of the cluster's networks: an NIA in
// every node on the node's memory bus, and the multi-dimensional crossbar
// that joins them (model/sr8000/README.md, "Published figures"). With
// `crossbar X Y [Z]` (or up to 8 nodes and no crossbar line: X = nodes,
// Y = Z = 1), node n sits at column n % X, row n / X % Y, plane n / (X * Y).
// Each row of a plane hangs off an x-crossbar; with Y > 1 each column of a
// plane also off a y-crossbar, and with Z > 1 each (column, row) through the
// planes off a z-crossbar. Every link moves sr8000_link_mbps per direction.
//
// Routes (dimension order: x, then y, then z): a packet crosses the
// crossbar of each dimension in which its destination differs, turning at
// the network router of the node where the coordinates it has fixed so far
// meet the destination's. A broadcast goes from the root to its x-crossbar,
// up to the serialisation crossbar (in 1D the x-crossbar serialises; in 3D
// through its plane's distributor), which sends it to every x-crossbar of
// the group at once (3D: every plane's distributor, which sends it on to
// that plane's x-crossbars); each gives it to its members.
#pragma once

#include <memory>
#include <vector>

#include "host/host.h"
#include "sim/network.h"
#include "core/agenda.h"
#include "sr8000/barrier.h"
#include "sr8000/config.h"
#include "sr8000/crossbar.h"
#include "sr8000/link.h"
#include "sr8000/nia.h"
#include "topo/topology.h"

namespace p2 {

class Sr8000Device : public NodeDevice {
 public:
  explicit Sr8000Device(Nia& nia) : nia_(nia) {}
  const char* kind() const override { return "sr8000"; }
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
  Nia& nia_;
};

class Sr8000Network : public Network, public SrFabric {
 public:
  // `line`: the topology's `device sr8000` line, for messages. Throws
  // ConfigError on a shape the SR8000 cannot have.
  Sr8000Network(const Topology& topo, int line, const Params& params,
                std::vector<std::unique_ptr<Host>>& hosts);
  ~Sr8000Network() override;

  const char* kind() const override { return "sr8000"; }
  NodeDevice& device(unsigned node) override { return *devices_[node]; }
  std::vector<PcieLink*> links() const override { return {}; }  // none is PCIe
  uint64_t tlps_created() const override;  // packets the NIAs sent
  void write_node_table(std::ostream& out) const override;
  void write_node_json(std::ostream& out, unsigned node) const override;
  // Links whose packets wait for buffer space that never frees ("" if none).
  std::string describe_stall() override;
  void set_traffic_observer(TrafficObserver* observer) override;

  const Sr8000Config& config() const { return config_; }
  Nia& nia(unsigned n) { return *nias_[n]; }
  SrBarrierUnit& barrier() override { return *barrier_; }
  std::vector<SrLink*> route(unsigned src, unsigned dst) const override;
  std::vector<SrLink*> broadcast_route(unsigned src) const override;
  std::vector<const SrLink*> all_links() const;

 private:
  // The index, among dimension `dim`'s crossbars, of the one node `n` hangs off.
  unsigned xbar_of(unsigned dim, unsigned n) const;

  Sr8000Config config_;
  std::unique_ptr<Agenda> agenda_;
  // Per dimension (x, y, z): its crossbars, and per node the links to and
  // from its crossbar of that dimension.
  std::vector<std::unique_ptr<SrSwitch>> xbar_[3];
  std::vector<std::unique_ptr<SrLink>> up_[3], down_[3];
  std::vector<std::unique_ptr<SrSwitch>> routers_, distributors_;
  std::unique_ptr<SrSwitch> serialiser_;
  std::vector<std::unique_ptr<Nia>> nias_;
  std::vector<std::unique_ptr<Sr8000Device>> devices_;
  std::unique_ptr<SrBarrierUnit> barrier_;
  // 2D: x-crossbar i to the serialiser and back. 3D: x-crossbar i to its
  // plane's distributor and back, and each distributor to the serialiser
  // and back.
  std::vector<std::unique_ptr<SrLink>> x_to_s_, s_to_x_, x_to_p_, p_to_x_, p_to_s_, s_to_p_;
};

}  // namespace p2
