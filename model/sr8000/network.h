// network.h - the Hitachi SR8000 as one of the cluster's networks: an NIA in
// every node on the node's memory bus, and the multi-dimensional crossbar
// that joins them (model/sr8000/README.md, "Published figures"). With
// `crossbar X Y` (or up to 8 nodes and no crossbar line: X = nodes, Y = 1),
// node n sits at column n % X of row n / X. Row r's nodes hang off
// x-crossbar r; with Y > 1 column c's nodes also hang off y-crossbar c, and a
// serialisation crossbar is joined to every x-crossbar. Every link moves
// sr8000_link_mbps per direction.
//
// Routes (x then y): a packet to a node of its own row crosses its
// x-crossbar; to its own column, its y-crossbar; otherwise its x-crossbar to
// the node at the destination's column in its own row, whose network router
// turns it onto that column's y-crossbar. A broadcast goes from the root to
// its x-crossbar, on to the serialisation crossbar (in 1D the x-crossbar
// serialises), which sends it to every x-crossbar of the group at once; each
// gives it to its members.
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

  const Sr8000Config& config() const { return config_; }
  Nia& nia(unsigned n) { return *nias_[n]; }
  SrBarrierUnit& barrier() override { return *barrier_; }
  std::vector<SrLink*> route(unsigned src, unsigned dst) const override;
  std::vector<SrLink*> broadcast_route(unsigned src) const override;
  std::vector<const SrLink*> all_links() const;

 private:
  Sr8000Config config_;
  std::unique_ptr<Agenda> agenda_;
  std::vector<std::unique_ptr<SrSwitch>> xbar_x_, xbar_y_, routers_;
  std::unique_ptr<SrSwitch> serialiser_;
  std::vector<std::unique_ptr<Nia>> nias_;
  std::vector<std::unique_ptr<Sr8000Device>> devices_;
  std::unique_ptr<SrBarrierUnit> barrier_;
  // Per node: to and from its x-crossbar, and (2D) to its y-crossbar (from
  // its router) and from it.
  std::vector<std::unique_ptr<SrLink>> up_x_, down_x_, up_y_, down_y_;
  // 2D: x-crossbar r to the serialiser and back.
  std::vector<std::unique_ptr<SrLink>> x_to_s_, s_to_x_;
};

}  // namespace p2
