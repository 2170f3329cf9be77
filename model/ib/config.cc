#include "ib/config.h"

#include <cmath>

#include "core/clock.h"

namespace p2 {

sc_core::sc_time IbLinkConfig::wire_time(uint32_t bytes) const {
  // Whole picoseconds, rounded up, so the rate is never exceeded.
  return ps(static_cast<uint64_t>(std::ceil(bytes * 1000.0 / bytes_per_ns - 1e-9)));
}

IbConfig IbConfig::make(const Params& p) {
  IbConfig c;
  c.link.bytes_per_ns = p.ib_link_lanes * p.ib_link_gbaud * p.ib_link_encoding / 8.0;
  c.link.latency = ns(p.ib_link_latency_ns);
  c.link.credit_block = static_cast<uint32_t>(p.ib_credit_block_bytes);
  c.link.rx_credits = c.link.blocks(static_cast<uint32_t>(p.ib_rx_buffer_bytes));
  c.link.head_bytes = static_cast<uint32_t>(p.ib_packet_header_bytes);
  c.switch_latency = ns(p.ib_switch_latency_ns);
  c.header_bytes = static_cast<uint32_t>(p.ib_packet_header_bytes);
  c.reth_bytes = static_cast<uint32_t>(p.ib_reth_bytes);
  c.imm_bytes = static_cast<uint32_t>(p.ib_imm_bytes);
  c.ack_bytes = static_cast<uint32_t>(p.ib_ack_bytes);
  c.mtu = static_cast<uint32_t>(p.ib_mtu_bytes);
  c.aeth_bytes = static_cast<uint32_t>(p.ib_aeth_bytes);
  c.atomic_eth_bytes = static_cast<uint32_t>(p.ib_atomic_eth_bytes);
  c.atomic_ack_bytes = static_cast<uint32_t>(p.ib_atomic_ack_eth_bytes);
  c.doorbell = ns(p.ib_hca_doorbell_ns);
  c.wqe = ns(p.ib_hca_wqe_ns);
  c.tx = ns(p.ib_hca_tx_ns);
  c.rx = ns(p.ib_hca_rx_ns);
  c.cqe = ns(p.ib_hca_cqe_ns);
  c.ack = ns(p.ib_hca_ack_ns);
  c.reg = ns(p.ib_hca_reg_ns);
  c.read = ns(p.ib_hca_read_ns);
  c.atomic = ns(p.ib_hca_atomic_ns);
  c.max_rd_atomic = static_cast<uint32_t>(p.ib_hca_max_rd_atomic);
  c.max_reads = static_cast<uint32_t>(p.ib_hca_max_reads);
  c.pcie_tx_tlps = static_cast<uint32_t>(p.ib_hca_pcie_tx_tlps);
  c.rail_policy = static_cast<uint32_t>(p.ib_rail_policy);
  c.stripe_min_bytes = static_cast<uint64_t>(p.ib_stripe_min_bytes);
  c.host_memory_bytes = static_cast<uint64_t>(p.host_memory_bytes);
  c.gpu_memory_bytes = static_cast<uint64_t>(p.gpu_memory_bytes);
  c.max_payload = static_cast<uint32_t>(p.ib_pcie_max_payload_bytes);
  c.max_read_request = static_cast<uint32_t>(p.ib_pcie_max_read_request_bytes);
  return c;
}

LinkConfig IbConfig::slot_link(const Params& p) {
  Params q = p;
  q.pcie_lanes = p.ib_pcie_lanes;
  q.pcie_gtps = p.ib_pcie_gtps;
  q.pcie_encoding = p.ib_pcie_encoding;
  q.link_latency_ns = p.ib_pcie_latency_ns;
  q.cable_m = 0;
  q.max_payload_bytes = p.ib_pcie_max_payload_bytes;
  q.max_read_request_bytes = p.ib_pcie_max_read_request_bytes;
  return LinkConfig(q);
}

}  // namespace p2
