#include "sr8000/network.h"

#include <cinttypes>
#include <cstdio>

namespace p2 {

namespace {

double us(sc_core::sc_time t) { return t.to_seconds() * 1e6; }

std::string register_name(uint64_t off) {
  char out[64];
  static const char* const fixed[] = {"ID", "NODE_ID", "NUM_NODES", "SHAPE", "ERROR", "ERRORS",
                                      "KICKS", "KICKS_REUSED"};
  if (off < 0x40 && off % 8 == 0) return fixed[off / 8];
  if (off >= SR_REG_AREA_BASE(0) && off < SR_REG_AREA_BASE(SR_AREAS)) {
    std::snprintf(out, sizeof out, "AREA%u %s", static_cast<unsigned>((off - 0x100) / 0x10),
                  (off - 0x100) % 0x10 ? "SIZE" : "BASE");
    return out;
  }
  if (off == SR_REG_KICK) return "KICK";
  if (off == SR_REG_BCAST_KICK) return "BCAST_KICK";
  if (off >= SR_REG_GROUP(0) && off < SR_REG_GROUP(SR_COLORS)) {
    static const char* const per[] = {"GROUP", "GROUP_STATUS", "BAR_ARRIVE", "BAR_STATE",
                                      "BCAST_ARM", "BCAST_ARM_SIZE", "BCAST_STATE", "+0x38"};
    std::snprintf(out, sizeof out, "%s(%u)", per[(off - 0x400) % 0x40 / 8],
                  static_cast<unsigned>((off - 0x400) / 0x40));
    return out;
  }
  std::snprintf(out, sizeof out, "register 0x%" PRIx64, off);
  return out;
}

}  // namespace

// ---- The NIA as a node device ----------------------------------------------------

bool Sr8000Device::access_ok(unsigned bar, uint64_t offset, uint64_t len) const {
  return bar == SR_BAR_REGS && len == 8 && offset % 8 == 0 && offset < SR_REGS_SIZE;
}

void Sr8000Device::mmio_write(unsigned, uint64_t offset, uint64_t value) {
  nia_.mmio_write(offset, value);
}

void Sr8000Device::mmio_read(unsigned, uint64_t offset, std::function<void(uint64_t, bool)> done) {
  nia_.mmio_read(offset, std::move(done));
}

void Sr8000Device::bar_write(unsigned, uint64_t, const uint8_t*, uint32_t) {
  // The NIA has no store window (access_ok refuses every such store).
}

uint64_t Sr8000Device::peek(unsigned bar, uint64_t offset) const {
  return bar == SR_BAR_REGS ? nia_.peek(offset) : 0;
}

void Sr8000Device::set_change_observer(std::function<void()> f) {
  nia_.set_change_observer(std::move(f));
}

std::string Sr8000Device::describe(unsigned bar, uint64_t offset) const {
  if (bar == SR_BAR_REGS) return register_name(offset);
  return "BAR" + std::to_string(bar);
}

std::string Sr8000Device::describe_memory_wait(uint64_t addr, uint64_t mask, uint64_t value) const {
  std::string what = nia_.describe_word(addr);
  if (what.empty()) return "";
  char tail[96];
  std::snprintf(tail, sizeof tail, " (word & 0x%llx == 0x%llx)", static_cast<unsigned long long>(mask),
                static_cast<unsigned long long>(value));
  return what + tail;
}

// ---- The network -------------------------------------------------------------------

Sr8000Network::Sr8000Network(const Topology& topo, int line, const Params& params,
                             std::vector<std::unique_ptr<Host>>& hosts)
    : config_(Sr8000Config::make(params, topo, line)) {
  const unsigned n = config_.nodes, dims = config_.dims();
  agenda_ = std::make_unique<Agenda>("sr8000_agenda");
  barrier_ = std::make_unique<SrBarrierUnit>(
      config_, *agenda_, [this](unsigned node, unsigned c, unsigned st) { nias_[node]->barrier_released(c, st); });
  for (unsigned i = 0; i < n; ++i) {
    nias_.push_back(std::make_unique<Nia>(i, config_, *hosts[i], *agenda_, *this));
    devices_.push_back(std::make_unique<Sr8000Device>(*nias_.back()));
  }
  static const char* const letter[3] = {"x", "y", "z"};
  static const SrSwitch::Role role[3] = {SrSwitch::Role::XCrossbar, SrSwitch::Role::YCrossbar,
                                         SrSwitch::Role::ZCrossbar};
  for (unsigned d = 0; d < dims; ++d)
    for (unsigned k = 0; k < n / config_.extent(d); ++k)
      xbar_[d].push_back(std::make_unique<SrSwitch>("xbar_" + std::string(letter[d]) + std::to_string(k), role[d],
                                                    k, config_, *agenda_, config_.xbar_latency));
  if (dims > 1) {
    serialiser_ = std::make_unique<SrSwitch>("xbar_serial", SrSwitch::Role::Serialiser, 0, config_,
                                             *agenda_, config_.xbar_latency);
    for (unsigned i = 0; i < n; ++i)
      routers_.push_back(std::make_unique<SrSwitch>("node" + std::to_string(i) + "_router",
                                                    SrSwitch::Role::Router, i, config_, *agenda_,
                                                    config_.router_latency));
  }
  for (unsigned d = 0; d < dims; ++d)
    for (unsigned i = 0; i < n; ++i) {
      const std::string node = "node" + std::to_string(i), xbar = std::string("xbar_") + letter[d];
      up_[d].push_back(std::make_unique<SrLink>(node + "_to_" + xbar, config_, *agenda_,
                                                *xbar_[d][xbar_of(d, i)], SrLink::Deliver::Head));
      down_[d].push_back(std::make_unique<SrLink>(xbar + "_to_" + node, config_, *agenda_, *nias_[i],
                                                  SrLink::Deliver::Tail,
                                                  dims > 1 ? routers_[i].get() : nullptr));
    }
  // The broadcast tree above the x-crossbars.
  const unsigned rows = config_.y * config_.z;  // x-crossbars
  auto link = [this](std::vector<std::unique_ptr<SrLink>>& v, const std::string& name, SrSwitch& to) {
    v.push_back(std::make_unique<SrLink>(name, config_, *agenda_, to, SrLink::Deliver::Head));
    return v.back().get();
  };
  if (dims == 2) {
    std::vector<SrSwitch::Out> out;
    for (unsigned r = 0; r < rows; ++r) {
      link(x_to_s_, "xbar_x" + std::to_string(r) + "_to_serial", *serialiser_);
      out.push_back({r, link(s_to_x_, "serial_to_xbar_x" + std::to_string(r), *xbar_[0][r])});
    }
    serialiser_->set_fanout(SrSwitch::Level::XCrossbar, out, true);
  } else if (dims == 3) {
    std::vector<SrSwitch::Out> planes;
    for (unsigned k = 0; k < config_.z; ++k) {
      const std::string plane = "plane" + std::to_string(k);
      distributors_.push_back(std::make_unique<SrSwitch>(plane + "_distributor", SrSwitch::Role::Distributor, k,
                                                         config_, *agenda_, config_.xbar_latency));
      link(p_to_s_, plane + "_to_serial", *serialiser_);
      planes.push_back({k, link(s_to_p_, "serial_to_" + plane, *distributors_[k])});
    }
    serialiser_->set_fanout(SrSwitch::Level::Plane, planes, true);
    std::vector<std::vector<SrSwitch::Out>> per_plane(config_.z);
    for (unsigned r = 0; r < rows; ++r) {
      const unsigned k = r / config_.y;
      const std::string plane = "plane" + std::to_string(k), xb = "xbar_x" + std::to_string(r);
      link(x_to_p_, xb + "_to_" + plane, *distributors_[k]);
      per_plane[k].push_back({r, link(p_to_x_, plane + "_to_" + xb, *xbar_[0][r])});
    }
    for (unsigned k = 0; k < config_.z; ++k)
      distributors_[k]->set_fanout(SrSwitch::Level::XCrossbar, per_plane[k], false);
  }
  for (unsigned r = 0; r < rows; ++r) {
    std::vector<SrSwitch::Out> members;
    for (unsigned i = r * config_.x; i < (r + 1) * config_.x; ++i) members.push_back({i, down_[0][i].get()});
    xbar_[0][r]->set_fanout(SrSwitch::Level::Node, members, dims == 1);
  }
}

Sr8000Network::~Sr8000Network() = default;

unsigned Sr8000Network::xbar_of(unsigned dim, unsigned n) const {
  const unsigned c = config_.col(n), r = config_.row(n), k = config_.plane(n);
  if (dim == 0) return r + config_.y * k;
  if (dim == 1) return c + config_.x * k;
  return c + config_.x * r;
}

std::vector<SrLink*> Sr8000Network::route(unsigned src, unsigned dst) const {
  std::vector<SrLink*> out;
  for (const Sr8000Config::Hop& h : config_.hops(src, dst)) {
    out.push_back(up_[h.dim][h.from].get());
    out.push_back(down_[h.dim][h.to].get());
  }
  return out;
}

std::vector<SrLink*> Sr8000Network::broadcast_route(unsigned src) const {
  const unsigned r = xbar_of(0, src);
  switch (config_.dims()) {
    case 1: return {up_[0][src].get()};
    case 2: return {up_[0][src].get(), x_to_s_[r].get()};
    default: return {up_[0][src].get(), x_to_p_[r].get(), p_to_s_[config_.plane(src)].get()};
  }
}

std::vector<const SrLink*> Sr8000Network::all_links() const {
  std::vector<const SrLink*> out;
  for (const auto* v : {&up_[0], &down_[0], &up_[1], &down_[1], &up_[2], &down_[2], &x_to_s_, &s_to_x_,
                        &x_to_p_, &p_to_x_, &p_to_s_, &s_to_p_})
    for (const auto& l : *v) out.push_back(l.get());
  return out;
}

std::string Sr8000Network::describe_stall() {
  std::string out;
  for (const SrLink* l : all_links())
    if (l->queued())
      out += (out.empty() ? "" : ", ") + l->name() + " (" + std::to_string(l->queued()) + " packets)";
  return out.empty() ? "" : "SR8000 packets wait for input-buffer credits that never come back: " + out;
}

uint64_t Sr8000Network::tlps_created() const {
  uint64_t n = 0;
  for (const auto& nia : nias_) n += nia->stats().packets_sent + nia->stats().acks_sent;
  return n;
}

void Sr8000Network::write_node_table(std::ostream& out) const {
  out << "sr8000 link (transmitting)        packets      payload B     wire B   busy us  wait us\n";
  for (const SrLink* l : all_links()) {
    const SrLinkStats& s = l->stats();
    if (s.packets == 0) continue;
    char line[256];
    std::snprintf(line, sizeof line, "%-30s %9llu %14llu %10llu %9.3f %8.3f\n", l->name().c_str(),
                  static_cast<unsigned long long>(s.packets),
                  static_cast<unsigned long long>(s.payload_bytes),
                  static_cast<unsigned long long>(s.wire_bytes), us(s.busy), us(s.wait));
    out << line;
  }
  out << "\nnode  kicks  reused  tcw errs  packets out   bytes out  packets in  rx errs  bcasts  barriers  acks out  acks in\n";
  for (unsigned i = 0; i < nias_.size(); ++i) {
    const SrNiaStats& s = nias_[i]->stats();
    char line[256];
    std::snprintf(line, sizeof line, "%4u %6llu %7llu %9llu %12llu %11llu %11llu %8llu %7llu %9llu %9llu %8llu\n", i,
                  static_cast<unsigned long long>(s.kicks),
                  static_cast<unsigned long long>(s.kicks_reused),
                  static_cast<unsigned long long>(s.tcw_errors),
                  static_cast<unsigned long long>(s.packets_sent),
                  static_cast<unsigned long long>(s.bytes_sent),
                  static_cast<unsigned long long>(s.packets_received),
                  static_cast<unsigned long long>(s.rx_errors),
                  static_cast<unsigned long long>(s.broadcasts_received),
                  static_cast<unsigned long long>(s.barriers),
                  static_cast<unsigned long long>(s.acks_sent),
                  static_cast<unsigned long long>(s.acks_received));
    out << line;
  }
}

void Sr8000Network::write_node_json(std::ostream& out, unsigned i) const {
  const SrNiaStats& s = nias_[i]->stats();
  out << "\"nia\": {\"kicks\": " << s.kicks << ", \"kicks_reused\": " << s.kicks_reused
      << ", \"tcw_errors\": " << s.tcw_errors << ", \"packets_sent\": " << s.packets_sent
      << ", \"bytes_sent\": " << s.bytes_sent << ", \"packets_received\": " << s.packets_received
      << ", \"bytes_received\": " << s.bytes_received << ", \"rx_errors\": " << s.rx_errors
      << ", \"broadcasts_sent\": " << s.broadcasts_sent
      << ", \"broadcasts_received\": " << s.broadcasts_received << ", \"barriers\": " << s.barriers
      << ", \"acks_sent\": " << s.acks_sent << ", \"acks_received\": " << s.acks_received
      << ", \"mean_tcw_us\": "
      << (s.kicks ? us(s.tcw_latency_total) / static_cast<double>(s.kicks) : 0.0) << "}";
  // The node's own links (crossbar-to-crossbar links are in the text table).
  out << ", \"sr8000_links\": {";
  auto at = [this, i](const std::vector<std::unique_ptr<SrLink>>& v) { return v.empty() ? nullptr : v[i].get(); };
  const std::pair<const char*, const SrLink*> own[] = {
      {"to_xbar_x", at(up_[0])},   {"from_xbar_x", at(down_[0])}, {"to_xbar_y", at(up_[1])},
      {"from_xbar_y", at(down_[1])}, {"to_xbar_z", at(up_[2])}, {"from_xbar_z", at(down_[2])}};
  bool first = true;
  for (const auto& [name, link] : own) {
    if (!link) continue;
    const SrLinkStats& l = link->stats();
    out << (first ? "" : ", ") << "\"" << name << "\": {\"packets\": " << l.packets
        << ", \"payload_bytes\": " << l.payload_bytes << ", \"wire_bytes\": " << l.wire_bytes
        << ", \"busy_us\": " << us(l.busy) << ", \"wait_us\": " << us(l.wait) << "}";
    first = false;
  }
  out << "}";
}

void Sr8000Network::set_traffic_observer(TrafficObserver* observer) {
  for (auto& nia : nias_) nia->set_traffic_observer(observer);
}

}  // namespace p2
