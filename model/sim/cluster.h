// cluster.h - a whole virtual cluster: for every node a host and a PEACH2
// board joined by the N link, the boards cabled as the topology says, and the
// routing tables loaded into every board.
#pragma once

#include <memory>
#include <ostream>
#include <vector>

#include "host/host.h"
#include "peach2/chip.h"
#include "sim/params.h"
#include "topo/topology.h"

namespace p2 {

class Cluster {
 public:
  // `memory[n]` backs node n; nodes without one get zeroed buffers of
  // host_memory_bytes / gpu_memory_bytes. Throws ConfigError on a bad topology.
  Cluster(const Topology& topo, const Params& params, RoutingPolicy policy,
          std::vector<NodeMemory> memory = {});
  ~Cluster();

  unsigned nodes() const { return static_cast<unsigned>(hosts_.size()); }
  Host& host(unsigned n) { return *hosts_[n]; }
  Peach2& chip(unsigned n) { return *chips_[n]; }
  const Topology& topology() const { return topo_; }
  const RouteTable& routes() const { return routes_; }
  const Params& params() const { return params_; }
  std::vector<PcieLink*> links() const;

  // Statistics: per link direction and per port, as a table and as JSON.
  void write_stats_table(std::ostream& out) const;
  void write_stats_json(std::ostream& out) const;
  // Records every TLP to a Chrome-trace / Perfetto JSON file.
  void enable_trace(const std::string& path);
  void finish_trace();

 private:
  Topology topo_;
  Params params_;
  RouteTable routes_;
  std::vector<std::pair<uint8_t*, uint64_t>> anonymous_;  // memory we mapped ourselves
  std::vector<std::unique_ptr<Host>> hosts_;
  std::vector<std::unique_ptr<Peach2>> chips_;
  std::vector<std::unique_ptr<PcieLink>> links_;
  std::unique_ptr<struct TraceWriter> trace_;
};

}  // namespace p2
