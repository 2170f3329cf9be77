// traffic.h - the transfers a network's units start, for whoever records
// them (p2sim --traffic, which p2map screens placements with): a DMA
// descriptor's data, a PIO store, an InfiniBand message, an SR8000 TCW, each
// once, when its unit starts it, with the node its bytes leave and the node
// they go to, and which memory they are read from and written to ("gpu",
// "host"; "cpu" for a CPU's stores). The units report through this seam and
// carry no file code.
#pragma once

#include <cstdint>

namespace p2 {

struct TrafficObserver {
  virtual ~TrafficObserver() = default;
  // `bytes` leave node `src` for node `dst` (never the same node: a unit
  // reports only transfers that cross its network), starting now.
  virtual void on_transfer(unsigned src, unsigned dst, uint64_t bytes, const char* network,
                           const char* from, const char* to) = 0;
};

}  // namespace p2
