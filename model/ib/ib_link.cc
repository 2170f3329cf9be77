#include "ib/ib_link.h"

#include <algorithm>
#include <stdexcept>

namespace p2 {

using sc_core::sc_time;

IbLink::IbLink(sc_core::sc_module_name name, const IbLinkConfig& config)
    : sc_module(name), config_(config), agenda_("agenda") {
  const std::string n = sc_core::sc_module::name();
  ends_[0].reset(new IbPort(this, 0, n + ".a"));
  ends_[1].reset(new IbPort(this, 1, n + ".b"));
  for (Dir& d : dirs_) d.credits = config_.rx_credits;
}

IbLink::~IbLink() = default;

IbPort& IbPort::peer() const { return *link_->ends_[1 - side_]; }
const IbDirStats& IbPort::tx_stats() const { return link_->dirs_[side_].stats; }

bool IbPort::ready(uint32_t wire_bytes) {
  IbLink::Dir& d = link_->dirs_[side_];
  const sc_time now = sim_time();
  if (d.wire_free > now) return false;
  if (d.credits < link_->config_.blocks(wire_bytes)) {
    if (!d.stalled) {
      d.stalled = true;
      d.stall_since = now;
    }
    return false;
  }
  return true;
}

sc_time IbPort::send(IbPacketPtr p, sc_time not_before_end) {
  IbLink::Dir& d = link_->dirs_[side_];
  const IbLinkConfig& c = link_->config_;
  const sc_time now = sim_time();
  const uint32_t blocks = c.blocks(p->wire_bytes);
  if (d.wire_free > now || d.credits < blocks) throw std::logic_error(name_ + ": send while not ready");
  if (d.stalled) {
    d.stats.credit_stall += now - d.stall_since;
    d.stalled = false;
  }
  d.credits -= blocks;
  const sc_time end = std::max(now + c.wire_time(p->wire_bytes), not_before_end);
  d.wire_free = end;
  d.stats.packets++;
  d.stats.payload_bytes += p->data.size();
  d.stats.wire_bytes += p->wire_bytes;
  d.stats.busy += end - now;
  const sc_time head = now + c.latency + c.wire_time(std::min(p->wire_bytes, c.head_bytes));
  const sc_time tail = end + c.latency;
  IbPort& far = peer();
  IbPort* self = this;
  auto shared = std::make_shared<IbPacketPtr>(std::move(p));
  link_->agenda_.at(head, [&far, shared, tail] { far.client_->packet_arrived(far, std::move(*shared), tail); });
  link_->agenda_.at(end, [self] { self->client_->tx_ready(*self); });
  return end;
}

void IbPort::release(uint32_t wire_bytes) {
  // Credits go back to the far transmitter in a flow-control packet.
  IbPort& far = peer();
  IbLink::Dir& d = link_->dirs_[far.side_];
  const uint32_t blocks = link_->config_.blocks(wire_bytes);
  link_->agenda_.after(link_->config_.latency, [&far, &d, blocks] {
    d.credits += blocks;
    far.client_->tx_ready(far);
  });
}

}  // namespace p2
