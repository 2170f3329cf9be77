#include "ib/responder.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "ib/transport.h"

namespace p2 {


IbResponder::IbResponder(unsigned node, const IbConfig& config, Agenda& agenda, Host host)
    : node_(node), config_(config), agenda_(agenda), host_(std::move(host)) {
  // A rail's share of the DMA read tags, in MTU packets of MRRS reads.
  const uint32_t reads_per_packet = (config_.mtu + config_.max_read_request - 1) / config_.max_read_request;
  ahead_ = std::max<uint32_t>(1, config_.max_reads / IB_PORTS / std::max<uint32_t>(1, reads_per_packet));
}

void IbResponder::request(const IbPacket& req, unsigned rail) {
  auto r = std::make_shared<IbPacket>(req);
  agenda_.after(config_.read, [this, r, rail] { serve(*r, rail); });
}

// A response packet to `req`: its read data from `offset` of the part (an
// atomic's old value travels in atomic_old), on the request's rail.
IbPacketPtr IbResponder::response_to(const IbPacket& req, unsigned rail, uint32_t offset, uint32_t payload) {
  auto r = std::make_unique<IbPacket>();
  r->kind = IbPacket::Kind::Response;
  r->src = node_;
  r->dst = req.src;
  r->rail = rail;
  r->opcode = req.opcode;
  r->msg_id = req.msg_id;
  r->msn = req.msn;
  r->msg_offset = req.msg_offset + offset;
  r->first = offset == 0;
  r->last = offset + payload >= req.read_length;
  r->data.resize(payload);
  r->id = host_.packet_id();
  r->born = sim_time();
  if (ib_is_atomic(req.opcode))
    r->wire_bytes = config_.header_bytes + config_.aeth_bytes + config_.atomic_ack_bytes;
  else
    r->wire_bytes = config_.header_bytes + payload + (r->first || r->last ? config_.aeth_bytes : 0);
  return r;
}

void IbResponder::serve(const IbPacket& req, unsigned rail) {
  if (ib_is_atomic(req.opcode)) {
    atomics_.push_back({req, rail});
    run_atomic();
    return;
  }
  ++*host_.reads_served;
  if (req.read_length && !ib_local_ok(config_, node_, req.remote_addr, req.read_length)) {
    IbPacketPtr r = response_to(req, rail, 0, 0);
    r->last = true;
    r->status = IB_ERR_REMOTE;
    host_.send(std::move(r), 0);
    return;
  }
  if (!req.read_length) {
    host_.send(response_to(req, rail, 0, 0), 0);
    return;
  }
  reads_[rail].push_back({req, 0});
  pump(rail);
}

// MTU response packets, each read from memory as a send's data is, while the
// rail has fewer than ahead_ reading theirs.
void IbResponder::pump(unsigned rail) {
  auto& q = reads_[rail];
  while (!q.empty() && building_[rail] < ahead_) {
    ReadJob& job = q.front();
    const uint32_t payload = std::min(config_.mtu, job.req.read_length - job.off);
    ++building_[rail];
    host_.send(response_to(job.req, rail, job.off, payload), job.req.remote_addr + job.off);
    job.off += payload;
    if (job.off >= job.req.read_length) q.pop_front();
  }
}

void IbResponder::response_ready(unsigned rail) {
  --building_[rail];
  pump(rail);
}

// One atomic at a time, from its 8-byte read to its result written, so the
// next one reads what this one wrote (a read does not pass the write before
// it on the HCA's PCIe link).
void IbResponder::run_atomic() {
  if (atomic_busy_ || atomics_.empty()) return;
  const IbPacket& req = atomics_.front().req;
  if (req.remote_addr % IB_ATOMIC_BYTES || !ib_local_ok(config_, node_, req.remote_addr, IB_ATOMIC_BYTES)) {
    IbPacketPtr r = response_to(req, atomics_.front().rail, 0, 0);
    r->last = true;
    r->status = IB_ERR_REMOTE;
    atomics_.pop_front();
    host_.send(std::move(r), 0);
    run_atomic();
    return;
  }
  atomic_busy_ = true;
  host_.read_word(req.remote_addr);
}

void IbResponder::atomic_read_done(const std::vector<uint8_t>& old_bytes) {
  uint64_t old = 0;
  std::memcpy(&old, old_bytes.data(), std::min(sizeof old, old_bytes.size()));
  agenda_.after(config_.atomic, [this, old] {
    const AtomicJob job = std::move(atomics_.front());
    atomics_.pop_front();
    const IbPacket& req = job.req;
    const uint64_t result = ib_atomic_result(req.opcode, old, req.compare_add, req.swap);
    if (req.opcode == IB_OP_ATOMIC_FETCH_ADD || result != old)
      host_.write(req.remote_addr, reinterpret_cast<const uint8_t*>(&result), IB_ATOMIC_BYTES);
    ++*host_.atomics_served;
    IbPacketPtr r = response_to(req, job.rail, 0, 0);
    r->last = true;
    r->atomic_old = old;
    host_.send(std::move(r), 0);
    atomic_busy_ = false;
    run_atomic();
  });
}

}  // namespace p2
