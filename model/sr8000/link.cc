#include "sr8000/link.h"

#include <algorithm>

namespace p2 {

void SrLink::send(SrPacketPtr p, std::function<void()> left) {
  queue_.push_back({std::move(p), std::move(left), sim_time()});
  pump();
}

void SrLink::release(uint64_t wire_bytes) {
  credits_ += wire_bytes;
  pump();
}

void SrLink::pump() {
  const sc_core::sc_time now = sim_time();
  while (!queue_.empty()) {
    if (free_ > now) {
      // Busy: look again when the packet on the wire is out.
      if (!pump_armed_) {
        pump_armed_ = true;
        agenda_.at(free_, [this] {
          pump_armed_ = false;
          pump();
        });
      }
      return;
    }
    Waiting& w = queue_.front();
    const uint64_t wire = wire_bytes(*w.p);
    if (credits_ < wire) return;  // release() pumps again
    credits_ -= wire;
    SrPacketPtr p = std::move(w.p);
    std::function<void()> left = std::move(w.left);
    const sc_core::sc_time since = w.since;
    queue_.pop_front();
    const sc_core::sc_time clocking = config_.on_link(wire);
    free_ = now + clocking;
    stats_.packets++;
    stats_.payload_bytes += p->data.size();
    stats_.wire_bytes += wire;
    stats_.busy += clocking;
    stats_.wait += now - since;
    const bool onward = through_ && p->hop + 1 < p->route.size();
    SrSink* sink = onward ? through_ : &sink_;
    const sc_core::sc_time arrive =
        onward || deliver_ == Deliver::Head
            ? now + config_.on_link(config_.header_bytes) + config_.link_latency
            : free_ + config_.link_latency;
    agenda_.at(arrive, [this, sink, p] { sink->packet_arrived(*this, p); });
    if (left) agenda_.at(free_, std::move(left));
  }
}

}  // namespace p2
