#include "sim/cluster.h"

#include <sys/mman.h>

#include <cstdio>
#include <iomanip>

#include <stdexcept>

#include "core/scheduler.h"
#include "sr8000/network.h"
#include "stats/trace.h"
#include "stats/traffic_log.h"

namespace p2 {

namespace {

// Node memory nobody supplied: anonymous pages, zero until touched, so a
// 16-node cluster costs only what a test really writes.
struct AnonymousMemory {
  static uint8_t* map(uint64_t size) {
    if (size == 0) return nullptr;
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    return static_cast<uint8_t*>(p);
  }
};

double us(sc_core::sc_time t) { return t.to_seconds() * 1e6; }

}  // namespace

Cluster::Cluster(const Topology& topo, const Params& params, RoutingPolicy policy,
                 std::vector<NodeMemory> memory)
    : topo_(topo), params_(params) {
  const unsigned n = topo.nodes;
  memory.resize(n);
  for (unsigned i = 0; i < n; ++i) {
    NodeMemory& m = memory[i];
    if (!m.host) {
      m.host_size = static_cast<uint64_t>(params.host_memory_bytes);
      m.host = AnonymousMemory::map(m.host_size);
      anonymous_.emplace_back(m.host, m.host_size);
    }
    if (!m.gpu) {
      m.gpu_size = static_cast<uint64_t>(params.gpu_memory_bytes);
      m.gpu = AnonymousMemory::map(m.gpu_size);
      anonymous_.emplace_back(m.gpu, m.gpu_size);
    }
  }
  for (unsigned i = 0; i < n; ++i)
    hosts_.push_back(std::make_unique<Host>(("node" + std::to_string(i) + "_host").c_str(), i,
                                            HostConfig::make(params_, LinkConfig(params_)),
                                            memory[i]));
  // One network per `device` line; a new device type adds its case here.
  for (const TopoDevice& d : topo.devices) {
    if (d.kind == "peach2")
      networks_.push_back(std::make_unique<Peach2Network>(topo_, params_, policy, hosts_));
    else if (d.kind == "ib")
      networks_.push_back(std::make_unique<IbNetwork>(topo_, d.line, params_, hosts_));
    else if (d.kind == "sr8000")
      networks_.push_back(std::make_unique<Sr8000Network>(topo_, d.line, params_, hosts_));
    else
      throw ConfigError(topo.file, d.line, "unknown device '" + d.kind + "'");
  }
}

Cluster::~Cluster() {
  finish_trace();
  networks_.clear();
  hosts_.clear();
  for (auto& [p, size] : anonymous_) munmap(p, size);
}

IbNetwork& Cluster::ib() {
  for (auto& net : networks_)
    if (auto* p = dynamic_cast<IbNetwork*>(net.get())) return *p;
  throw std::logic_error("this cluster has no InfiniBand network");
}

Peach2Network& Cluster::peach2() {
  for (auto& net : networks_)
    if (auto* p = dynamic_cast<Peach2Network*>(net.get())) return *p;
  throw std::logic_error("this cluster has no PEACH2 network");
}

std::vector<PcieLink*> Cluster::links() const {
  std::vector<PcieLink*> out;
  for (const auto& net : networks_)
    for (PcieLink* l : net->links()) out.push_back(l);
  return out;
}

void Cluster::enable_trace(const std::string& path) {
  trace_ = std::make_unique<TraceWriter>(path);
  for (PcieLink* l : links()) {
    l->end_a().set_observer(trace_.get());
    l->end_b().set_observer(trace_.get());
  }
}

std::string Cluster::finish_trace() {
  if (!trace_) return "";
  for (PcieLink* l : links()) {
    l->end_a().set_observer(nullptr);
    l->end_b().set_observer(nullptr);
  }
  std::string error = trace_->close();
  trace_.reset();
  return error;
}

void Cluster::enable_traffic(const std::string& path) {
  traffic_ = std::make_unique<TrafficLog>(path);
  for (auto& net : networks_) net->set_traffic_observer(traffic_.get());
}

std::string Cluster::finish_traffic() {
  if (!traffic_) return "";
  for (auto& net : networks_) net->set_traffic_observer(nullptr);
  std::string error = traffic_->close();
  traffic_.reset();
  return error;
}

ClusterSummary Cluster::summary() const {
  ClusterSummary s;
  s.simulated = sim_time();
  // TLPs the hosts' root complexes and the networks' own units created.
  for (const auto& h : hosts_) s.tlps += h->stats().tlps_sent;
  for (const auto& net : networks_) s.tlps += net->tlps_created();
  for (PcieLink* l : links())
    for (LinkPort* p : {&l->end_a(), &l->end_b()}) s.tlp_hops += p->tx_stats().tlps;
  return s;
}

void Cluster::write_stats_table(std::ostream& out) const {
  const sc_core::sc_time now = sim_time();
  out << "simulated time: " << std::fixed << std::setprecision(3) << us(now) << " us\n\n";
  out << "link port (transmitting)         TLPs      payload B     wire B   busy us   util  stall us\n";
  for (PcieLink* l : links()) {
    for (LinkPort* p : {&l->end_a(), &l->end_b()}) {
      const LinkDirStats& s = p->tx_stats();
      if (s.tlps == 0 && s.dllps == 0) continue;
      char line[256];
      std::snprintf(line, sizeof line, "%-30s %8llu %14llu %10llu %9.3f %5.1f%% %9.3f\n",
                    p->name().c_str(), static_cast<unsigned long long>(s.tlps),
                    static_cast<unsigned long long>(s.payload_bytes),
                    static_cast<unsigned long long>(s.wire_bytes), us(s.busy),
                    now > sc_core::SC_ZERO_TIME ? 100.0 * (s.busy / now) : 0.0, us(s.credit_stall));
      out << line;
    }
  }
  for (const auto& net : networks_) {
    out << "\n";
    net->write_node_table(out);
  }
}

void Cluster::write_stats_json(std::ostream& out, const ProcessStats* process,
                               const ProgramWork* work) const {
  const sc_core::sc_time now = sim_time();
  const ClusterSummary sum = summary();
  out << std::setprecision(9);
  out << "{\n  \"summary\": {\"simulated_us\": " << us(sum.simulated) << ", \"tlps\": " << sum.tlps
      << ", \"tlp_hops\": " << sum.tlp_hops;
  if (process) {
    const double sim_s = sum.simulated.to_seconds();
    out << ", \"wall_s\": " << process->wall_s
        << ", \"slowdown\": " << (sim_s > 0 ? process->wall_s / sim_s : 0.0)
        << ", \"tlp_hops_per_wall_s\": "
        << (process->wall_s > 0 ? static_cast<double>(sum.tlp_hops) / process->wall_s : 0.0)
        << ", \"peak_rss_kib\": " << process->peak_rss_kib;
  }
  out << "},\n";
  if (work) {
    double total = 0, most = 0;
    size_t most_rank = 0;
    for (size_t i = 0; i < work->rank_cpu_s.size(); i++) {
      total += work->rank_cpu_s[i];
      if (work->rank_cpu_s[i] > most) most = work->rank_cpu_s[i], most_rank = i;
    }
    out << "  \"program\": {\"clock\": \"" << work->clock << "\", \"cpu_s\": " << total
        << ", \"largest_rank\": " << most_rank << ", \"largest_cpu_s\": " << most
        << ", \"instructions\": " << work->instructions << ", \"charged_s\": " << work->charged_s
        << ", \"answers\": " << work->answers << ", \"answered_at_stamp\": " << work->answered_at_stamp
        << ", \"decided_when_asked\": " << work->decided_when_asked << ", \"rank_cpu_s\": [";
    for (size_t i = 0; i < work->rank_cpu_s.size(); i++) out << (i ? ", " : "") << work->rank_cpu_s[i];
    out << "]},\n";
  }
  out << "  \"simulated_us\": " << us(now) << ",\n  \"links\": [";
  bool first = true;
  for (PcieLink* l : links()) {
    for (LinkPort* p : {&l->end_a(), &l->end_b()}) {
      const LinkDirStats& s = p->tx_stats();
      out << (first ? "\n" : ",\n") << "    {\"port\": \"" << p->name() << "\", \"tlps\": " << s.tlps
          << ", \"payload_bytes\": " << s.payload_bytes << ", \"wire_bytes\": " << s.wire_bytes
          << ", \"dllps\": " << s.dllps << ", \"busy_us\": " << us(s.busy)
          << ", \"credit_stall_us\": " << us(s.credit_stall) << "}";
      first = false;
    }
  }
  out << "\n  ],\n  \"nodes\": [";
  for (unsigned i = 0; i < nodes(); ++i) {
    const HostStats& h = hosts_[i]->stats();
    out << (i ? ",\n" : "\n") << "    {\"node\": " << i;
    for (const auto& net : networks_) {
      out << ", ";
      net->write_node_json(out, i);
    }
    out << ", \"host\": {\"writes\": " << h.writes << ", \"write_bytes\": " << h.write_bytes
        << ", \"dropped_writes\": " << h.dropped_writes << ", \"reads\": " << h.reads
        << ", \"read_bytes\": " << h.read_bytes << ", \"unsupported_reads\": " << h.unsupported_reads
        << ", \"tlps_sent\": " << h.tlps_sent
        << ", \"mean_write_latency_us\": "
        << (h.writes ? us(h.write_latency_total) / static_cast<double>(h.writes) : 0.0) << "}}";
  }
  out << "\n  ]\n}\n";
}

}  // namespace p2
