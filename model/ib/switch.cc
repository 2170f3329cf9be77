#include "ib/switch.h"

#include <stdexcept>

namespace p2 {

using sc_core::sc_time;

IbSwitch::IbSwitch(sc_core::sc_module_name name, unsigned ports, const IbConfig& config)
    : sc_module(name), config_(config), ports_(ports, nullptr), outputs_(ports), agenda_("agenda") {}

void IbSwitch::attach(unsigned port, IbPort& end) {
  ports_.at(port) = &end;
  end.attach(this, port);
}

void IbSwitch::packet_arrived(IbPort& port, IbPacketPtr p, sc_time tail) {
  const unsigned out = p->dst;
  if (out >= ports_.size() || !ports_[out]) throw std::logic_error("ib switch: no port for node");
  const unsigned in = port.tag();
  auto shared = std::make_shared<IbPacketPtr>(std::move(p));
  agenda_.after(config_.switch_latency, [this, out, in, shared, tail] {
    Waiting w{std::move(*shared), tail, in, 0, sim_time()};
    w.wire_bytes = w.p->wire_bytes;
    outputs_[out].push_back(std::move(w));
    try_output(out);
  });
}

void IbSwitch::tx_ready(IbPort& port) { try_output(port.tag()); }

void IbSwitch::try_output(unsigned out) {
  auto& q = outputs_[out];
  while (!q.empty() && ports_[out]->ready(q.front().wire_bytes)) {
    Waiting w = std::move(q.front());
    q.pop_front();
    ++stats_.packets;
    stats_.queue_total += sim_time() - w.eligible;
    ports_[out]->send(std::move(w.p), w.tail);
    ports_[w.in]->release(w.wire_bytes);
  }
}

size_t IbSwitch::queued() const {
  size_t n = 0;
  for (const auto& q : outputs_) n += q.size();
  return n;
}

}  // namespace p2
