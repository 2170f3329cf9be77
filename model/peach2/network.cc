#include "peach2/network.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <iomanip>
#include <iostream>

#include "peach2/credit_cycle.h"
#include "peach2/dmac.h"
#include "peach2/pio_window.h"
#include "peach2/registers.h"
#include "peach2/router.h"

namespace p2 {

namespace {

double us(sc_core::sc_time t) { return t.to_seconds() * 1e6; }

std::string link_name(const TopoLink& l) {
  auto port = [](const PortRef& p) {
    std::string s = port_ref_name(p);
    return s.substr(s.find('.') + 1);
  };
  return "cable_" + std::to_string(l.a.node) + port(l.a) + "_" + std::to_string(l.b.node) +
         port(l.b);
}

std::string register_name(uint64_t reg) {
  static const char* const dma_names[] = {"DESC_PTR", "START", "STATUS", "ERROR",
                                          "REG_COUNT", "DONE", "RUNS"};
  static const char* const notify_names[] = {"RAISE", "RING",     "RING_SIZE", "HEAD", "TAIL",
                                             "OVERFLOW", "TABLE_ON", "POP",       "PEEK"};
  char out[64];
  if (reg == P2_REG_CHIP_ID)
    return "CHIP_ID";
  else if (reg == P2_REG_NODE_ID)
    return "NODE_ID";
  else if (reg == P2_REG_NUM_NODES)
    return "NUM_NODES";
  else if (reg == P2_REG_CYCLES)
    return "CYCLES";
  else if (reg == P2_REG_PORT_MODE)
    return "PORT_MODE";
  else if (reg >= P2_REG_ROUTE_BASE && reg < P2_REG_ROUTE(P2_MAX_NODES) && reg % 8 == 0)
    std::snprintf(out, sizeof out, "ROUTE[%u]", static_cast<unsigned>((reg - P2_REG_ROUTE_BASE) / 8));
  else if (reg >= P2_REG_DMA_BASE && reg < P2_REG_DMA(P2_DMA_CHANNELS, 0)) {
    unsigned c = static_cast<unsigned>((reg - P2_REG_DMA_BASE) / P2_REG_DMA_STRIDE);
    unsigned r = static_cast<unsigned>((reg - P2_REG_DMA_BASE) % P2_REG_DMA_STRIDE);
    if (r % 8 == 0 && r / 8 < sizeof dma_names / sizeof dma_names[0])
      std::snprintf(out, sizeof out, "DMA%u %s", c, dma_names[r / 8]);
    else
      std::snprintf(out, sizeof out, "DMA%u +0x%x", c, r);
  } else if (reg >= P2_REG_DESC_BASE && reg < P2_REG_DESC(P2_DMA_CHANNELS, 0)) {
    uint64_t off = reg - P2_REG_DESC_BASE;
    unsigned c = static_cast<unsigned>(off / (P2_DESC_REG_SLOTS * 64u));
    unsigned i = static_cast<unsigned>(off % (P2_DESC_REG_SLOTS * 64u) / 64u);
    std::snprintf(out, sizeof out, "DESC%u[%u] +0x%x", c, i, static_cast<unsigned>(off % 64u));
  } else if (reg >= P2_REG_NOTIFY_RAISE && reg <= P2_REG_NOTIFY_PEEK && reg % 8 == 0 &&
             (reg - P2_REG_NOTIFY_RAISE) / 8 < sizeof notify_names / sizeof notify_names[0])
    std::snprintf(out, sizeof out, "NOTIFY %s", notify_names[(reg - P2_REG_NOTIFY_RAISE) / 8]);
  else
    std::snprintf(out, sizeof out, "register 0x%" PRIx64, reg);
  return out;
}

}  // namespace

// ---- The board as a node device ---------------------------------------------

bool Peach2Device::access_ok(unsigned bar, uint64_t offset, uint64_t len) const {
  return p2_bar_access_ok(bar, offset, len) != 0;
}

void Peach2Device::mmio_write(unsigned bar, uint64_t offset, uint64_t value) {
  host_.mmio_write(p2_bar_addr(host_.node(), bar, offset), value);
}

void Peach2Device::mmio_read(unsigned bar, uint64_t offset,
                             std::function<void(uint64_t value, bool ok)> done) {
  host_.mmio_read(p2_bar_addr(host_.node(), bar, offset), std::move(done));
}

void Peach2Device::bar_write(unsigned bar, uint64_t offset, const uint8_t* data, uint32_t len) {
  host_.pio_write(p2_bar_addr(host_.node(), bar, offset), data, len);
}

uint64_t Peach2Device::peek(unsigned bar, uint64_t offset) const {
  return bar == P2_BAR_REGS ? chip_.reg_peek(offset) : 0;
}

void Peach2Device::set_change_observer(std::function<void()> f) {
  chip_.set_change_observer(std::move(f));
}

std::string Peach2Device::describe(unsigned bar, uint64_t offset) const {
  if (bar == P2_BAR_REGS) return register_name(offset);
  char out[64];
  std::snprintf(out, sizeof out, "BAR%u offset 0x%" PRIx64, bar, offset);
  return out;
}

std::string Peach2Device::describe_memory_wait(uint64_t addr, uint64_t mask, uint64_t value) const {
  uint64_t ring = chip_.reg_peek(P2_REG_NOTIFY_RING);
  uint64_t size = chip_.reg_peek(P2_REG_NOTIFY_RING_SIZE);
  if (ring == 0 || size == 0 || addr < ring || (addr - ring) / 8 >= size) return "";
  // The library waits for the serial of entry i (i + 1, peach2_hw.h); a wait
  // of another shape on a ring word is told by its place in the ring.
  uint64_t serial = value >> 32;
  uint64_t entry = mask == P2_NOTIFY_SERIAL_MASK && serial != 0 ? serial - 1 : (addr - ring) / 8;
  return "a DMA notification (ring entry " + std::to_string(entry) + ")";
}

// ---- The network -------------------------------------------------------------

uint32_t Peach2Network::path_max_payload(const Topology& topo, const Params& params, unsigned from,
                                         unsigned to) const {
  // A write ends on the destination's N link; before that it crosses the
  // cables its route takes.
  uint32_t mps = LinkConfig(params).max_payload;
  if (routes_[from][to] == kNoRoute) return mps;  // another network: the DMAC refuses it
  std::vector<unsigned> path = route_path(topo, routes_, from, to);
  for (size_t h = 0; h + 1 < path.size(); ++h) {
    const TopoLink* l = topo.link_at(PortRef{path[h], routes_[path[h]][to]});
    if (l) mps = std::min(mps, LinkConfig(topo.link_params(*l, params)).max_payload);
  }
  return mps;
}

Peach2Network::Peach2Network(const Topology& topo, const Params& params, RoutingPolicy policy,
                             std::vector<std::unique_ptr<Host>>& hosts)
    : routes_(build_routes(topo, policy)) {
  const unsigned n = topo.nodes;
  const LinkConfig slot(params);  // every host slot has the cluster-wide link values
  for (unsigned i = 0; i < n; ++i) {
    std::string node = "node" + std::to_string(i);
    ChipConfig config = ChipConfig::make(params, slot, n);
    for (unsigned d = 0; d < n; ++d) config.dmac.max_payload_to[d] = path_max_payload(topo, params, i, d);
    chips_.push_back(std::make_unique<Peach2>((node + "_peach2").c_str(), i, n, std::move(config)));
    // The N link sits in the host's slot: host side Root Complex, board side Endpoint.
    links_.push_back(std::make_unique<PcieLink>((node + "_slot").c_str(), LinkConfig(params),
                                                LinkEndKind::RootComplex, LinkEndKind::Endpoint));
    hosts[i]->attach(links_.back()->end_a());
    chips_[i]->attach(P2_PORT_N, links_.back()->end_b());
    devices_.push_back(std::make_unique<Peach2Device>(*hosts[i], *chips_[i]));
    hosts_.push_back(hosts[i].get());
  }
  for (const TopoLink& l : topo.links) {
    links_.push_back(std::make_unique<PcieLink>(
        link_name(l).c_str(), LinkConfig(topo.link_params(l, params)),
        topo.port_kind[l.a.node][l.a.port], topo.port_kind[l.b.node][l.b.port]));
    chips_[l.a.node]->attach(l.a.port, links_.back()->end_a());
    chips_[l.b.node]->attach(l.b.port, links_.back()->end_b());
  }
  for (unsigned i = 0; i < n; ++i)
    for (unsigned d = 0; d < n; ++d) chips_[i]->set_route(d, routes_[i][d]);
  // A TLP for a node no cable path reaches never leaves its board; say so
  // once per board, naming both networks (the library refuses such calls
  // before they get here: lib/README.md, "Sub-clusters").
  std::vector<unsigned> net = topo.network.size() == n ? topo.network : peach2_networks(topo);
  for (unsigned i = 0; i < n; ++i)
    chips_[i]->router().on_unroutable([i, net, told = false](const Tlp& tlp, unsigned dest) mutable {
      if (told) return;
      told = true;
      std::cerr << "p2sim: node " << i << "'s PEACH2 refused a "
                << (tlp.kind == TlpKind::MemRead ? "read" : "write") << " for node " << dest
                << ": no cable path (node " << i << " is on PEACH2 network " << net[i] << ", node "
                << dest << " on network " << net[dest]
                << "); TCA cannot cross sub-clusters (further ones are counted, not reported)\n";
    });
}

Peach2Network::~Peach2Network() = default;

std::vector<PcieLink*> Peach2Network::links() const {
  std::vector<PcieLink*> out;
  for (const auto& l : links_) out.push_back(l.get());
  return out;
}

uint64_t Peach2Network::tlps_created() const {
  uint64_t n = 0;
  // Everything the DMAC and the register unit (and the router answering for
  // it) created entered the crossbar through their inputs.
  for (const auto& c : chips_) {
    const RouterStats& r = c->router().stats();
    n += r.tlps_in[static_cast<int>(Xbar::Dmac)] + r.tlps_in[static_cast<int>(Xbar::Regs)];
  }
  return n;
}

void Peach2Network::write_node_table(std::ostream& out) const {
  out << "node  dma runs  descriptors     bytes  errors  mean desc us  pio stores  notifies  dropped\n";
  for (unsigned i = 0; i < chips_.size(); ++i) {
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

void Peach2Network::write_node_json(std::ostream& out, unsigned i) const {
  const DmacStats& d = chips_[i]->dmac().stats();
  const RouterStats& r = chips_[i]->router().stats();
  out << "\"dmac\": {\"runs\": " << d.runs << ", \"descriptors\": " << d.descriptors
      << ", \"descriptor_fetches\": " << d.descriptor_fetches << ", \"bytes\": " << d.bytes
      << ", \"errors\": " << d.errors << ", \"latency_us\": {\"mean\": "
      << (d.descriptors ? us(d.latency_total) / static_cast<double>(d.descriptors) : 0.0)
      << ", \"min\": " << us(d.latency_min) << ", \"max\": " << us(d.latency_max) << "}}"
      << ", \"ports\": {";
  for (int x = 0; x < kXbarPorts; ++x)
    out << (x ? ", " : "") << "\"" << xbar_name(static_cast<Xbar>(x)) << "\": {\"tlps_in\": "
        << r.tlps_in[x] << ", \"tlps_out\": " << r.tlps_out[x] << ", \"bytes_out\": " << r.bytes_out[x]
        << ", \"busy_us\": " << us(r.output_busy[x]) << ", \"stall_us\": " << us(r.output_stall[x])
        << "}";
  out << "}, \"pio_stores\": " << chips_[i]->pio().stores()
      << ", \"notifications\": " << chips_[i]->registers().notifications();
}

std::string Peach2Network::describe_stall() {
  return describe_credit_cycle(*this, static_cast<unsigned>(chips_.size()));
}

void Peach2Network::set_traffic_observer(TrafficObserver* observer) {
  for (auto& chip : chips_) {
    chip->dmac().set_traffic_observer(observer);
    chip->pio().set_traffic_observer(observer, chip->node());
  }
}

}  // namespace p2
