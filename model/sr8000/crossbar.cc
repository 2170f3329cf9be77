#include "sr8000/crossbar.h"

#include "sr8000_hw.h"

namespace p2 {

void SrSwitch::packet_arrived(SrLink& from, SrPacketPtr p) {
  stats_.packets++;
  SrLink* in = &from;
  agenda_.after(latency_, [this, in, p] { forward(in, p); });
}

void SrSwitch::forward(SrLink* in, SrPacketPtr p) {
  if (p->hop + 1 < p->route.size()) {
    SrLink* next = p->route[++p->hop];
    const uint64_t wire = in->wire_bytes(*p);
    next->send(std::move(p), [in, wire] { in->release(wire); });
    return;
  }
  // A broadcast at the end of its point-to-point route.
  if (serialises_)
    serialise(in, std::move(p));
  else
    fan_out(in, p);
}

void SrSwitch::serialise(SrLink* in, SrPacketPtr p) {
  const bool mine = busy_ && owner_src_ == p->src && owner_message_ == p->message;
  if (busy_ && !mine) {
    // Held in this input's buffer (its space stays taken) until the
    // broadcast passing now has ended.
    held_.push_back({sim_time(), in, std::move(p)});
    return;
  }
  busy_ = !p->last;
  owner_src_ = p->src;
  owner_message_ = p->message;
  fan_out(in, p);
  // The broadcast ended: let the next one through, packet by packet, in the
  // order they came, as long as it owns the crossbar.
  while (!busy_ && !held_.empty()) {
    Held h = std::move(held_.front());
    held_.pop_front();
    stats_.serial_wait += sim_time() - h.since;
    busy_ = !h.p->last;
    owner_src_ = h.p->src;
    owner_message_ = h.p->message;
    fan_out(h.in, h.p);
    // Packets of the new owner already waiting go right after it.
    for (auto it = held_.begin(); busy_ && it != held_.end();) {
      if (it->p->src == owner_src_ && it->p->message == owner_message_) {
        stats_.serial_wait += sim_time() - it->since;
        busy_ = !it->p->last;
        fan_out(it->in, it->p);
        it = held_.erase(it);
      } else {
        ++it;
      }
    }
  }
}

bool SrSwitch::spans(const SrPacket& p, unsigned at) const {
  auto covers = [&p](unsigned dim, unsigned v) { return Sr8000Config::group_covers(p.group, dim, v); };
  switch (level_) {
    case Level::Node: return at != p.src && config_.in_group(p.group, at);
    case Level::XCrossbar: return covers(1, at % config_.y) && covers(2, at / config_.y);
    case Level::Plane: return covers(2, at);
  }
  return false;
}

void SrSwitch::fan_out(SrLink* in, const SrPacketPtr& p) {
  std::vector<SrLink*> targets;
  for (const Out& o : down_)
    if (spans(*p, o.at)) targets.push_back(o.link);
  const uint64_t wire = in->wire_bytes(*p);
  if (targets.empty()) {
    in->release(wire);
    return;
  }
  // The input's space goes back once the last copy's tail has left.
  auto copies_left = std::make_shared<size_t>(targets.size());
  for (SrLink* down : targets) {
    auto copy = std::make_shared<SrPacket>(*p);
    copy->route.assign(1, down);
    copy->hop = 0;
    stats_.broadcast_copies++;
    down->send(std::move(copy), [in, wire, copies_left] {
      if (--*copies_left == 0) in->release(wire);
    });
  }
}

}  // namespace p2
