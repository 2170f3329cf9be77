#include "ib/network.h"

#include <cinttypes>
#include <cstdio>

#include "core/clock.h"

namespace p2 {

namespace {

double us(sc_core::sc_time t) { return t.to_seconds() * 1e6; }

std::string register_name(uint64_t r) {
  switch (r) {
    case IB_REG_HCA_ID: return "HCA_ID";
    case IB_REG_NODE_ID: return "NODE_ID";
    case IB_REG_NUM_NODES: return "NUM_NODES";
    case IB_REG_PORTS: return "PORTS";
    case IB_REG_LID: return "LID";
    case IB_REG_MTU: return "MTU";
    case IB_REG_ERROR: return "ERROR";
    case IB_REG_SQ_BASE: return "SQ_BASE";
    case IB_REG_SQ_SIZE: return "SQ_SIZE";
    case IB_REG_SQ_DOORBELL: return "SQ_DOORBELL";
    case IB_REG_SQ_CONSUMED: return "SQ_CONSUMED";
    case IB_REG_RQ_BASE: return "RQ_BASE";
    case IB_REG_RQ_SIZE: return "RQ_SIZE";
    case IB_REG_RQ_DOORBELL: return "RQ_DOORBELL";
    case IB_REG_RQ_CONSUMED: return "RQ_CONSUMED";
    case IB_REG_CQ_BASE: return "CQ_BASE";
    case IB_REG_CQ_SIZE: return "CQ_SIZE";
    case IB_REG_CQ_HEAD: return "CQ_HEAD";
    case IB_REG_CQ_TAIL: return "CQ_TAIL";
    case IB_REG_CQ_OVERFLOW: return "CQ_OVERFLOW";
  }
  char out[48];
  std::snprintf(out, sizeof out, "HCA register 0x%" PRIx64, r);
  return out;
}

}  // namespace

// ---- The HCA as a node device ------------------------------------------------

bool IbDevice::access_ok(unsigned bar, uint64_t offset, uint64_t len) const {
  return ib_bar_access_ok(bar, offset, len) != 0;
}

void IbDevice::mmio_write(unsigned, uint64_t offset, uint64_t value) {
  host_.mmio_write(ib_bar_addr(host_.node(), offset), value);
}

void IbDevice::mmio_read(unsigned, uint64_t offset, std::function<void(uint64_t, bool)> done) {
  host_.mmio_read(ib_bar_addr(host_.node(), offset), std::move(done));
}

void IbDevice::bar_write(unsigned, uint64_t offset, const uint8_t* data, uint32_t len) {
  // The HCA has no write-combining window (no BlueFlame): plain stores.
  host_.pio_write(ib_bar_addr(host_.node(), offset), data, len);
}

uint64_t IbDevice::peek(unsigned bar, uint64_t offset) const {
  return bar == IB_BAR_REGS ? hca_.reg_peek(offset) : 0;
}

void IbDevice::set_change_observer(std::function<void()> f) { hca_.set_change_observer(std::move(f)); }

std::string IbDevice::describe(unsigned bar, uint64_t offset) const {
  if (bar == IB_BAR_REGS) return register_name(offset);
  char out[64];
  std::snprintf(out, sizeof out, "BAR%u offset 0x%" PRIx64, bar, offset);
  return out;
}

std::string IbDevice::describe_memory_wait(uint64_t addr, uint64_t mask, uint64_t value) const {
  const uint64_t cq = hca_.reg_peek(IB_REG_CQ_BASE), size = hca_.reg_peek(IB_REG_CQ_SIZE);
  if (cq == 0 || size == 0 || addr < cq || (addr - cq) / IB_CQE_SIZE >= size) return "";
  const uint64_t serial = value >> 32;
  const uint64_t entry =
      mask == IB_CQE_SERIAL_MASK && serial != 0 ? serial - 1 : (addr - cq) / IB_CQE_SIZE;
  return "an InfiniBand completion (CQ entry " + std::to_string(entry) + ")";
}

// ---- The network -------------------------------------------------------------

IbNetwork::IbNetwork(const Topology& topo, int line, const Params& params,
                     std::vector<std::unique_ptr<Host>>& hosts)
    : config_(IbConfig::make(params)) {
  const unsigned n = topo.nodes;
  if (n > IB_MAX_NODES)
    throw ConfigError(topo.file, line,
                      "device ib: " + std::to_string(n) + " nodes, but one switch per rail serves at most " +
                          std::to_string(IB_MAX_NODES));
  // Rules between parameters that matter only with an HCA: checked here,
  // where the `device ib` line makes them apply, and blamed on the
  // parameter-file line that set the last parameter involved, if any.
  auto v = [](double x) { return format_param_value(x); };
  auto fail = [&](std::initializer_list<std::string_view> names, const std::string& reason) {
    throw param_rule_error(params, names, topo.file, line, "device ib: " + reason);
  };
  if (config_.link.rx_credits < config_.link.blocks(config_.header_bytes + config_.reth_bytes +
                                                    config_.imm_bytes + config_.mtu))
    fail({"ib_rx_buffer_bytes", "ib_mtu_bytes", "ib_credit_block_bytes", "ib_packet_header_bytes",
          "ib_reth_bytes", "ib_imm_bytes"},
         "ib_rx_buffer_bytes = " + v(params.ib_rx_buffer_bytes) + " holds no packet of ib_mtu_bytes = " +
             v(params.ib_mtu_bytes) + " with its headers");
  if (config_.link.rx_credits < config_.link.blocks(config_.header_bytes + config_.aeth_bytes + config_.mtu) ||
      config_.link.rx_credits < config_.link.blocks(config_.header_bytes + config_.atomic_eth_bytes))
    fail({"ib_rx_buffer_bytes", "ib_mtu_bytes", "ib_credit_block_bytes", "ib_packet_header_bytes",
          "ib_aeth_bytes", "ib_atomic_eth_bytes"},
         "ib_rx_buffer_bytes = " + v(params.ib_rx_buffer_bytes) + " holds no RDMA read response of ib_mtu_bytes = " +
             v(params.ib_mtu_bytes) + " or atomic request with its headers");
  if (params.read_completion_boundary > params.ib_host_cpl_bytes)
    fail({"read_completion_boundary", "ib_host_cpl_bytes"},
         "read_completion_boundary = " + v(params.read_completion_boundary) +
             " exceeds ib_host_cpl_bytes = " + v(params.ib_host_cpl_bytes) +
             ": completions are whole multiples of the RCB");
  if (params.ib_host_cpl_bytes > params.ib_pcie_max_payload_bytes)
    fail({"ib_host_cpl_bytes", "ib_pcie_max_payload_bytes"},
         "ib_host_cpl_bytes = " + v(params.ib_host_cpl_bytes) + " exceeds ib_pcie_max_payload_bytes = " +
             v(params.ib_pcie_max_payload_bytes) + ": a completion carries at most the max payload");
  if (const char* credit = credits_short_of(params, params.ib_pcie_max_payload_bytes))
    fail({credit, "ib_pcie_max_payload_bytes"},
         "the HCA's slot: " + credits_reason(params, credit, params.ib_pcie_max_payload_bytes,
                                             "ib_pcie_max_payload_bytes"));
  for (unsigned r = 0; r < IB_PORTS; ++r)
    switches_.push_back(std::make_unique<IbSwitch>(("ib_switch" + std::to_string(r)).c_str(), n, config_));
  const LinkConfig slot = IbConfig::slot_link(params);
  Host::PortConfig port;
  port.cpu_windows = {{IB_REGS_OFFSET, IB_REGS_SIZE}};
  port.max_cpl_bytes = static_cast<uint32_t>(params.ib_host_cpl_bytes);
  HostConfig::MemoryTiming gpu{ns(params.ib_gpu_read_latency_ns), ns(params.gpu_write_latency_ns),
                               params.ib_gpu_read_gbps, 0, ns(params.gpu_read_flush_ns)};
  port.gpu = gpu;
  for (unsigned i = 0; i < n; ++i) {
    const std::string node = "node" + std::to_string(i);
    hcas_.push_back(std::make_unique<Hca>((node + "_hca").c_str(), i, n, config_));
    slots_.push_back(std::make_unique<PcieLink>((node + "_hca_slot").c_str(), slot,
                                                LinkEndKind::RootComplex, LinkEndKind::Endpoint));
    hosts[i]->attach(slots_.back()->end_a(), port);
    hcas_[i]->attach_pcie(slots_.back()->end_b());
    for (unsigned r = 0; r < IB_PORTS; ++r) {
      cables_.push_back(std::make_unique<IbLink>(
          (node + "_ib" + std::to_string(r)).c_str(), config_.link));
      hcas_[i]->attach_rail(r, cables_.back()->end_a());
      switches_[r]->attach(i, cables_.back()->end_b());
    }
    devices_.push_back(std::make_unique<IbDevice>(*hosts[i], *hcas_[i]));
  }
}

IbNetwork::~IbNetwork() = default;

std::vector<PcieLink*> IbNetwork::links() const {
  std::vector<PcieLink*> out;
  for (const auto& l : slots_) out.push_back(l.get());
  return out;
}

uint64_t IbNetwork::tlps_created() const {
  uint64_t n = 0;
  for (const auto& h : hcas_) n += h->tlps_created();
  return n;
}

void IbNetwork::write_node_table(std::ostream& out) const {
  out << "node   ib wqes  msgs sent  bytes sent  msgs recv  bytes recv  pkts out r0/r1     cqes  "
         "errors  mean msg us\n";
  for (unsigned i = 0; i < hcas_.size(); ++i) {
    const HcaStats& s = hcas_[i]->stats();
    char line[256];
    std::snprintf(line, sizeof line, "%4u %9llu %10llu %11llu %10llu %11llu %8llu/%-8llu %8llu %7llu %12.3f\n", i,
                  static_cast<unsigned long long>(s.wqes),
                  static_cast<unsigned long long>(s.messages_sent),
                  static_cast<unsigned long long>(s.bytes_sent),
                  static_cast<unsigned long long>(s.messages_received),
                  static_cast<unsigned long long>(s.bytes_received),
                  static_cast<unsigned long long>(s.packets_out[0]),
                  static_cast<unsigned long long>(s.packets_out[1]),
                  static_cast<unsigned long long>(s.cqes), static_cast<unsigned long long>(s.errors),
                  s.messages_sent ? us(s.latency_total) / static_cast<double>(s.messages_sent) : 0.0);
    out << line;
  }
}

void IbNetwork::write_node_json(std::ostream& out, unsigned i) const {
  const HcaStats& s = hcas_[i]->stats();
  out << "\"ib\": {\"wqes\": " << s.wqes << ", \"messages_sent\": " << s.messages_sent
      << ", \"bytes_sent\": " << s.bytes_sent << ", \"messages_received\": " << s.messages_received
      << ", \"bytes_received\": " << s.bytes_received << ", \"errors\": " << s.errors
      << ", \"cqes\": " << s.cqes << ", \"cq_overflow\": " << hcas_[i]->reg_peek(IB_REG_CQ_OVERFLOW)
      << ", \"dma_reads\": " << s.dma_reads << ", \"dma_read_bytes\": " << s.dma_read_bytes
      << ", \"rnr_waits\": " << s.rnr_waits << ", \"message_latency_us\": {\"mean\": "
      << (s.messages_sent ? us(s.latency_total) / static_cast<double>(s.messages_sent) : 0.0)
      << ", \"min\": " << us(s.latency_min) << ", \"max\": " << us(s.latency_max) << "}, \"rails\": [";
  for (unsigned r = 0; r < IB_PORTS; ++r) {
    const IbDirStats& o = cables_[i * IB_PORTS + r]->end_a().tx_stats();
    const IbDirStats& in = cables_[i * IB_PORTS + r]->end_b().tx_stats();
    out << (r ? ", " : "") << "{\"packets_out\": " << s.packets_out[r] << ", \"packets_in\": "
        << s.packets_in[r] << ", \"wire_bytes_out\": " << o.wire_bytes << ", \"wire_bytes_in\": "
        << in.wire_bytes << ", \"busy_out_us\": " << us(o.busy) << ", \"credit_stall_out_us\": "
        << us(o.credit_stall) << "}";
  }
  out << "]}";
}

std::string IbNetwork::describe_stall() {
  for (const auto& h : hcas_) {
    std::string s = h->describe_stall();
    if (!s.empty()) return "InfiniBand: " + s;
  }
  return "";
}

void IbNetwork::set_traffic_observer(TrafficObserver* observer) {
  for (auto& h : hcas_) h->set_traffic_observer(observer);
}

}  // namespace p2
