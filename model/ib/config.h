// config.h - the InfiniBand network's configuration, built once from the
// IB-scope parameters (params.def): the HCA, its PCIe slot link, the 4X QDR
// links and the switches.
#pragma once

#include <cstdint>

#include <systemc>

#include "core/params.h"
#include "pcie/link.h"

namespace p2 {

struct IbLinkConfig {
  double bytes_per_ns = 0;            // lanes * Gb/s * encoding / 8
  sc_core::sc_time latency;           // besides serialisation
  uint32_t credit_block = 0;          // bytes per credit
  uint32_t rx_credits = 0;            // blocks of each receive buffer
  uint32_t head_bytes = 0;            // bytes in before a switch can route (the headers)
  sc_core::sc_time wire_time(uint32_t bytes) const;
  uint32_t blocks(uint32_t bytes) const { return (bytes + credit_block - 1) / credit_block; }
};

struct IbConfig {
  IbLinkConfig link;
  sc_core::sc_time switch_latency;
  uint32_t header_bytes = 0, reth_bytes = 0, imm_bytes = 0, ack_bytes = 0, mtu = 0;
  uint32_t aeth_bytes = 0, atomic_eth_bytes = 0, atomic_ack_bytes = 0;  // RDMA READ, atomics
  sc_core::sc_time doorbell, wqe, tx, rx, cqe, ack, reg;
  sc_core::sc_time read, atomic;  // the responder's stages of RDMA READ and atomics
  uint32_t max_reads = 0, pcie_tx_tlps = 0, max_rd_atomic = 0;
  uint32_t rail_policy = 0;
  uint64_t stripe_min_bytes = 0;
  uint64_t host_memory_bytes = 0, gpu_memory_bytes = 0;  // what every node exposes
  uint32_t max_payload = 0, max_read_request = 0;        // of the slot link

  static IbConfig make(const Params& p);
  // The LINK parameters of the HCA's slot: the cluster's, with the IB slot's
  // lanes, rate, encoding, latency, MPS and MRRS.
  static LinkConfig slot_link(const Params& p);
};

}  // namespace p2
