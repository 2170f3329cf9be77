// config.h - what each unit of a PEACH2 board is configured with: typed
// values built once from the parameter table (CHIP scope) and from the links
// the unit really sends on. Peach2Network builds one per board.
#pragma once

#include <cstdint>
#include <vector>

#include "core/params.h"
#include "pcie/link.h"

namespace p2 {

struct RouterConfig {
  uint32_t route_pipeline_cycles = 0;  // per hop, input to output
  uint32_t output_queue_tlps = 0;      // before the crossbar stalls its inputs
  uint32_t ring_bubble_tlps = 0;       // kept free on E/W for TLPs going on along the ring
  uint32_t datapath_bytes = 0;         // moved per cycle
};

struct RegistersConfig {
  uint32_t access_cycles = 0;
  uint32_t notify_table_entries = 0;
};

struct PioWindowConfig {
  uint32_t translate_cycles = 0;
};

struct DmacConfig {
  uint32_t desc_cycles = 0, reg_desc_cycles = 0;
  uint32_t max_reads = 0;  // tags
  // Every DMA read goes to this node's host or GPU over the N link, so its
  // requests are cut by the N link's max read request size.
  uint32_t max_read_request = 0;
  // [destination node]: the smallest max payload size of the links a write
  // to that node crosses (cables on its route and the destination's N link).
  // A PCIe device never sends a TLP larger than a link on its path accepts.
  std::vector<uint32_t> max_payload_to;
  uint64_t host_exposed_bytes = 0, gpu_exposed_bytes = 0;  // memory every node exposes
};

struct ChipConfig {
  double chip_mhz = 0;
  RouterConfig router;
  RegistersConfig registers;
  PioWindowConfig pio;
  DmacConfig dmac;

  // The CHIP-scope values, and the DMAC's read size from the N link `slot`;
  // max_payload_to is every node's slot MPS until the network fills it in
  // from the routes.
  static ChipConfig make(const Params& p, const LinkConfig& slot, unsigned nnodes);
};

}  // namespace p2
