#include "peach2/config.h"

namespace p2 {

ChipConfig ChipConfig::make(const Params& p, const LinkConfig& slot, unsigned nnodes) {
  auto u32 = [](double v) { return static_cast<uint32_t>(v); };
  ChipConfig c;
  c.chip_mhz = p.chip_mhz;
  c.router.route_pipeline_cycles = u32(p.route_pipeline_cycles);
  c.router.output_queue_tlps = u32(p.output_queue_tlps);
  c.router.ring_bubble_tlps = u32(p.ring_bubble_tlps);
  c.router.datapath_bytes = u32(p.datapath_bytes);
  c.registers.access_cycles = u32(p.reg_access_cycles);
  c.registers.notify_table_entries = u32(p.notify_table_entries);
  c.pio.translate_cycles = u32(p.pio_translate_cycles);
  c.dmac.desc_cycles = u32(p.dmac_desc_cycles);
  c.dmac.reg_desc_cycles = u32(p.dmac_reg_desc_cycles);
  c.dmac.max_reads = u32(p.dmac_max_reads);
  c.dmac.max_read_request = slot.max_read_request;
  c.dmac.max_payload_to.assign(nnodes, slot.max_payload);
  c.dmac.host_exposed_bytes = static_cast<uint64_t>(p.host_memory_bytes);
  c.dmac.gpu_exposed_bytes = static_cast<uint64_t>(p.gpu_memory_bytes);
  return c;
}

}  // namespace p2
