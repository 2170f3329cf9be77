#include "sim/cluster.h"

#include <sys/mman.h>

#include <cstdio>
#include <iomanip>

#include "peach2/dmac.h"
#include "peach2/pio_window.h"
#include "peach2/registers.h"
#include "peach2/router.h"
#include "stats/trace.h"

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

std::string link_name(const TopoLink& l) {
  return "cable_" + std::to_string(l.a.node) + port_ref_name(l.a).substr(port_ref_name(l.a).find('.') + 1) +
         "_" + std::to_string(l.b.node) + port_ref_name(l.b).substr(port_ref_name(l.b).find('.') + 1);
}

}  // namespace

Cluster::Cluster(const Topology& topo, const Params& params, RoutingPolicy policy,
                 std::vector<NodeMemory> memory)
    : topo_(topo), params_(params), routes_(build_routes(topo, policy)) {
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

  for (unsigned i = 0; i < n; ++i) {
    std::string node = "node" + std::to_string(i);
    hosts_.push_back(std::make_unique<Host>((node + "_host").c_str(), i, params_, memory[i]));
    chips_.push_back(std::make_unique<Peach2>((node + "_peach2").c_str(), i, n, params_));
    // The N link sits in the host's slot: host side Root Complex, board side Endpoint.
    links_.push_back(std::make_unique<PcieLink>((node + "_slot").c_str(), LinkConfig(params_),
                                                LinkEndKind::RootComplex, LinkEndKind::Endpoint));
    hosts_[i]->attach(links_.back()->end_a());
    chips_[i]->attach(P2_PORT_N, links_.back()->end_b());
  }
  for (const TopoLink& l : topo.links) {
    links_.push_back(std::make_unique<PcieLink>(
        link_name(l).c_str(), LinkConfig(topo.link_params(l, params_)),
        topo.port_kind[l.a.node][l.a.port], topo.port_kind[l.b.node][l.b.port]));
    chips_[l.a.node]->attach(l.a.port, links_.back()->end_a());
    chips_[l.b.node]->attach(l.b.port, links_.back()->end_b());
  }
  for (unsigned i = 0; i < n; ++i)
    for (unsigned d = 0; d < n; ++d) chips_[i]->set_route(d, routes_[i][d]);
}

Cluster::~Cluster() {
  finish_trace();
  for (auto& [p, size] : anonymous_) munmap(p, size);
}

std::vector<PcieLink*> Cluster::links() const {
  std::vector<PcieLink*> out;
  for (const auto& l : links_) out.push_back(l.get());
  return out;
}

void Cluster::enable_trace(const std::string& path) {
  trace_ = std::make_unique<TraceWriter>(path);
  for (auto& l : links_) {
    l->end_a().set_observer(trace_.get());
    l->end_b().set_observer(trace_.get());
  }
}

void Cluster::finish_trace() {
  if (!trace_) return;
  for (auto& l : links_) {
    l->end_a().set_observer(nullptr);
    l->end_b().set_observer(nullptr);
  }
  trace_->close();
  trace_.reset();
}

ClusterSummary Cluster::summary() const {
  ClusterSummary s;
  s.simulated = sc_core::sc_time_stamp();
  for (unsigned i = 0; i < nodes(); ++i) {
    const RouterStats& r = chips_[i]->router().stats();
    // Everything the DMAC and the register unit (and the router answering
    // for it) created entered the crossbar through their inputs.
    s.tlps += hosts_[i]->stats().tlps_sent + r.tlps_in[static_cast<int>(Xbar::Dmac)] +
              r.tlps_in[static_cast<int>(Xbar::Regs)];
  }
  for (const auto& l : links_)
    for (LinkPort* p : {&l->end_a(), &l->end_b()}) s.tlp_hops += p->tx_stats().tlps;
  return s;
}

void Cluster::write_stats_table(std::ostream& out) const {
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  out << "simulated time: " << std::fixed << std::setprecision(3) << us(now) << " us\n\n";
  out << "link port (transmitting)         TLPs      payload B     wire B   busy us   util  stall us\n";
  for (const auto& l : links_) {
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
  out << "\nnode  dma runs  descriptors     bytes  errors  mean desc us  pio stores  notifies  dropped\n";
  for (unsigned i = 0; i < nodes(); ++i) {
    const DmacStats& d = chips_[i]->dmac().stats();
    const RouterStats& r = chips_[i]->router().stats();
    double mean = d.descriptors ? us(d.latency_total) / static_cast<double>(d.descriptors) : 0.0;
    char line[256];
    std::snprintf(line, sizeof line, "%4u %9llu %12llu %9llu %7llu %13.3f %11llu %9llu %8llu\n", i,
                  static_cast<unsigned long long>(d.runs),
                  static_cast<unsigned long long>(d.descriptors),
                  static_cast<unsigned long long>(d.bytes),
                  static_cast<unsigned long long>(d.errors), mean,
                  static_cast<unsigned long long>(chips_[i]->pio().stores()),
                  static_cast<unsigned long long>(chips_[i]->registers().notifications()),
                  static_cast<unsigned long long>(r.dropped_writes + hosts_[i]->stats().dropped_writes));
    out << line;
  }
}

void Cluster::write_stats_json(std::ostream& out, const ProcessStats* process) const {
  const sc_core::sc_time now = sc_core::sc_time_stamp();
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
  out << "},\n  \"simulated_us\": " << us(now) << ",\n  \"links\": [";
  bool first = true;
  for (const auto& l : links_) {
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
    const DmacStats& d = chips_[i]->dmac().stats();
    const RouterStats& r = chips_[i]->router().stats();
    const HostStats& h = hosts_[i]->stats();
    out << (i ? ",\n" : "\n") << "    {\"node\": " << i << ", \"dmac\": {\"runs\": " << d.runs
        << ", \"descriptors\": " << d.descriptors << ", \"descriptor_fetches\": " << d.descriptor_fetches
        << ", \"bytes\": " << d.bytes << ", \"errors\": " << d.errors
        << ", \"latency_us\": {\"mean\": "
        << (d.descriptors ? us(d.latency_total) / static_cast<double>(d.descriptors) : 0.0)
        << ", \"min\": " << us(d.latency_min) << ", \"max\": " << us(d.latency_max) << "}}"
        << ", \"ports\": {";
    for (int x = 0; x < kXbarPorts; ++x)
      out << (x ? ", " : "") << "\"" << xbar_name(static_cast<Xbar>(x)) << "\": {\"tlps_in\": "
          << r.tlps_in[x] << ", \"tlps_out\": " << r.tlps_out[x] << ", \"bytes_out\": " << r.bytes_out[x]
          << ", \"busy_us\": " << us(r.output_busy[x]) << ", \"stall_us\": " << us(r.output_stall[x])
          << "}";
    out << "}, \"pio_stores\": " << chips_[i]->pio().stores()
        << ", \"notifications\": " << chips_[i]->registers().notifications()
        << ", \"host\": {\"writes\": " << h.writes << ", \"write_bytes\": " << h.write_bytes
        << ", \"dropped_writes\": " << h.dropped_writes << ", \"reads\": " << h.reads
        << ", \"read_bytes\": " << h.read_bytes << ", \"unsupported_reads\": " << h.unsupported_reads
        << ", \"tlps_sent\": " << h.tlps_sent
        << ", \"mean_write_latency_us\": "
        << (h.writes ? us(h.write_latency_total) / static_cast<double>(h.writes) : 0.0) << "}}";
  }
  out << "\n  ]\n}\n";
}

}  // namespace p2
