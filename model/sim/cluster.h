// cluster.h - a whole virtual cluster: for every node a host (root complex,
// host and GPU memory), and the networks the topology's `device` lines name
// (PEACH2 by default), each with its device in every node.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "core/params.h"
#include "host/host.h"
#include "ib/network.h"
#include "peach2/network.h"
#include "sim/network.h"
#include "topo/topology.h"

namespace p2 {

// Totals of a run, computed from the units' statistics.
struct ClusterSummary {
  sc_core::sc_time simulated;  // the model's time
  // TLPs the initiators created: host root complexes (CPU stores and loads,
  // read completions), DMACs (descriptor and data reads, data writes,
  // notifications) and the boards' register units (read completions,
  // notification-ring writes, Unsupported Request answers). The PIO window
  // rewrites a store's address; the store stays one TLP.
  uint64_t tlps = 0;
  uint64_t tlp_hops = 0;  // TLPs transmitted, summed over every link direction
};

// What the simulator process measured about itself (host figures, not the
// model's: they differ from run to run).
struct ProcessStats {
  double wall_s = 0;          // from the simulator's start to the end of the job
  uint64_t peak_rss_kib = 0;  // getrusage ru_maxrss
};

// The ranks' own code outside the libraries, as their runtimes measured it
// (host figures: they differ from run to run), and what the job's clock
// charged for it (lib/src/rt/rt_meter.c).
struct ProgramWork {
  std::string clock;               // "model", "cpu" or "instructions"
  std::vector<double> rank_cpu_s;  // host CPU time per rank
  uint64_t instructions = 0;       // --clock=instructions: user-mode instructions, all ranks
  double charged_s = 0;            // simulated time charged for it, all ranks
  // The hand-overs back to the ranks (every answer wakes one), and how many
  // were settled before the model had to run: answered at the request's own
  // stamp, and of those, asked when the model had already reached that
  // stamp (a rank that could read the simulator's committed time and the
  // memory as of it would have needed no hand-over).
  uint64_t answers = 0, answered_at_stamp = 0, decided_when_asked = 0;
};

class Cluster {
 public:
  // `memory[n]` backs node n; nodes without one get zeroed buffers of
  // host_memory_bytes / gpu_memory_bytes. Throws ConfigError on a bad topology.
  Cluster(const Topology& topo, const Params& params, RoutingPolicy policy,
          std::vector<NodeMemory> memory = {});
  ~Cluster();

  unsigned nodes() const { return static_cast<unsigned>(hosts_.size()); }
  Host& host(unsigned n) { return *hosts_[n]; }
  // The networks in `device` line order; device d of a node is network d's.
  unsigned device_count() const { return static_cast<unsigned>(networks_.size()); }
  Network& network(unsigned d) { return *networks_[d]; }
  NodeDevice& device(unsigned node, unsigned d) { return networks_[d]->device(node); }
  // The PEACH2 network (tests and tools that look inside the boards); throws
  // std::logic_error when the topology has none.
  Peach2Network& peach2();
  IbNetwork& ib();  // throws std::logic_error without a `device ib` line
  Peach2& chip(unsigned n) { return peach2().chip(n); }
  const Topology& topology() const { return topo_; }
  const Params& params() const { return params_; }
  std::vector<PcieLink*> links() const;  // of every network

  ClusterSummary summary() const;
  // Statistics: per link direction and per port, as a table and as JSON. The
  // JSON starts with a "summary" object (ClusterSummary, and `process` when
  // given: wall time, slowdown = wall / simulated, TLP hops per wall second,
  // peak RSS).
  void write_stats_table(std::ostream& out) const;
  void write_stats_json(std::ostream& out, const ProcessStats* process = nullptr,
                        const ProgramWork* work = nullptr) const;
  // Records every TLP to a Chrome-trace / Perfetto JSON file.
  void enable_trace(const std::string& path);
  // Closes the trace: "" when it was written whole, else why not.
  std::string finish_trace();
  // Records every transfer the networks' units start to a CSV file
  // (stats/traffic_log.h); finish_traffic closes it as finish_trace does.
  void enable_traffic(const std::string& path);
  std::string finish_traffic();

 private:
  Topology topo_;
  Params params_;
  std::vector<std::pair<uint8_t*, uint64_t>> anonymous_;  // memory we mapped ourselves
  std::vector<std::unique_ptr<Host>> hosts_;
  std::vector<std::unique_ptr<Network>> networks_;
  std::unique_ptr<struct TraceWriter> trace_;
  std::unique_ptr<struct TrafficLog> traffic_;
};

}  // namespace p2
