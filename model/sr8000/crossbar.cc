#include "sr8000/crossbar.h"

namespace p2 {

void SrSwitch::packet_arrived(SrLink&, SrPacketPtr p) {
  stats_.packets++;
  agenda_.after(latency_, [this, p] { forward(p); });
}

void SrSwitch::forward(SrPacketPtr p) {
  if (p->hop + 1 < p->route.size()) {
    SrLink* next = p->route[++p->hop];
    next->send(std::move(p));
    return;
  }
  // A broadcast at the end of its point-to-point route.
  if (serialises_)
    serialise(std::move(p));
  else
    fan_out(p);
}

void SrSwitch::serialise(SrPacketPtr p) {
  const bool mine = busy_ && owner_src_ == p->src && owner_message_ == p->message;
  if (busy_ && !mine) {
    held_.emplace_back(sc_core::sc_time_stamp(), std::move(p));
    return;
  }
  busy_ = !p->last;
  owner_src_ = p->src;
  owner_message_ = p->message;
  fan_out(p);
  // The broadcast ended: let the next one through, packet by packet, in the
  // order they came, as long as it owns the crossbar.
  while (!busy_ && !held_.empty()) {
    auto [since, q] = std::move(held_.front());
    held_.pop_front();
    stats_.serial_wait += sc_core::sc_time_stamp() - since;
    busy_ = !q->last;
    owner_src_ = q->src;
    owner_message_ = q->message;
    fan_out(q);
    // Packets of the new owner already waiting go right after it.
    for (auto it = held_.begin(); busy_ && it != held_.end();) {
      if (it->second->src == owner_src_ && it->second->message == owner_message_) {
        stats_.serial_wait += sc_core::sc_time_stamp() - it->first;
        busy_ = !it->second->last;
        fan_out(it->second);
        it = held_.erase(it);
      } else {
        ++it;
      }
    }
  }
}

void SrSwitch::fan_out(const SrPacketPtr& p) {
  const bool to_rows = role_ == Role::Serialiser;
  for (unsigned i = 0; i < down_.size(); ++i) {
    if (!down_[i]) continue;
    bool member = false;
    if (to_rows) {
      for (unsigned c = 0; c < config_.x; ++c)
        member |= (p->group >> (i * config_.x + c)) & 1u;
    } else {
      member = ((p->group >> i) & 1u) && i != p->src;
    }
    if (!member) continue;
    auto copy = std::make_shared<SrPacket>(*p);
    copy->route.assign(1, down_[i]);
    copy->hop = 0;
    stats_.broadcast_copies++;
    down_[i]->send(std::move(copy));
  }
}

}  // namespace p2
