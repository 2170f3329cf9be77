#include "sr8000/link.h"

#include <algorithm>

namespace p2 {

sc_core::sc_time SrLink::send(SrPacketPtr p) {
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  const sc_core::sc_time start = std::max(now, free_);
  const uint64_t wire = config_.header_bytes + p->data.size();
  const sc_core::sc_time clocking = config_.on_link(wire);
  free_ = start + clocking;
  stats_.packets++;
  stats_.payload_bytes += p->data.size();
  stats_.wire_bytes += wire;
  stats_.busy += clocking;
  stats_.wait += start - now;
  const bool onward = through_ && p->hop + 1 < p->route.size();
  SrSink* sink = onward ? through_ : &sink_;
  const sc_core::sc_time arrive =
      onward || deliver_ == Deliver::Head
          ? start + config_.on_link(config_.header_bytes) + config_.link_latency
          : free_ + config_.link_latency;
  agenda_.at(arrive, [this, sink, p] { sink->packet_arrived(*this, p); });
  return free_;
}

}  // namespace p2
