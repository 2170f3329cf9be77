#include "ib/connections.h"

#include <algorithm>

namespace p2 {

void IbConnections::add(const Message& m) {
  Stream st;
  st.m = m;
  st.seq = posted_++;
  st.single = ib_is_read_or_atomic(m.wqe.opcode) ||
              (m.parts.size() == 1 && m.parts[0].length <= config_.mtu);
  st.sent.assign(m.parts.size(), 0);
  st.started.assign(m.parts.size(), false);
  queues_[m.wqe.dest_node].push_back(std::move(st));
}

IbPacketPtr IbConnections::packet(const Message& m, unsigned rail) {
  const ib_wqe& w = m.wqe;
  auto p = std::make_unique<IbPacket>();
  p->kind = IbPacket::Kind::Data;
  p->src = node_;
  p->dst = w.dest_node;
  p->rail = rail;
  p->opcode = w.opcode;
  p->msg_length = w.length;
  p->imm = w.imm;
  p->msn = m.msn;
  p->msg_id = m.id;
  p->id = (static_cast<uint64_t>(node_) << 48) | packet_ids_++;
  p->born = m.doorbell;
  return p;
}

IbPacketPtr IbConnections::request(const Message& m, const IbPart& pt) {
  const ib_wqe& w = m.wqe;
  IbPacketPtr p = packet(m, pt.rail);
  p->first = p->last = true;
  p->msg_offset = pt.offset;
  p->read_length = pt.length;
  p->remote_addr = w.remote_addr + pt.offset;
  p->compare_add = w.compare_add;
  p->swap = w.swap;
  p->wire_bytes = config_.header_bytes +
                  (ib_is_atomic(w.opcode) ? config_.atomic_eth_bytes : config_.reth_bytes);
  return p;
}

std::vector<IbPacketPtr> IbConnections::requests(const Message& m) {
  std::vector<IbPacketPtr> out;
  for (const IbPart& pt : m.parts) out.push_back(request(m, pt));
  return out;
}

bool IbConnections::next(IbPacketPtr* out, uint64_t* src) {
  if (queues_.empty()) return false;
  // The oldest one-packet message at the head of its connection, else the
  // oldest message.
  auto it = queues_.end(), oldest = queues_.end();
  for (auto q = queues_.begin(); q != queues_.end(); ++q) {
    const Stream& f = q->second.front();
    if (oldest == queues_.end() || f.seq < oldest->second.front().seq) oldest = q;
    if (f.single && (it == queues_.end() || f.seq < it->second.front().seq)) it = q;
  }
  if (it == queues_.end()) it = oldest;
  Stream& st = it->second.front();
  const ib_wqe& w = st.m.wqe;
  const size_t i = st.part;
  const IbPart& pt = st.m.parts[i];
  if (ib_is_read_or_atomic(w.opcode)) {  // its requests, behind the messages before it
    *out = request(st.m, pt);
    *src = 0;
    if (++st.part >= st.m.parts.size()) {
      it->second.pop_front();
      if (it->second.empty()) queues_.erase(it);
    }
    return true;
  }
  const bool rdma = w.opcode == IB_OP_RDMA_WRITE || w.opcode == IB_OP_RDMA_WRITE_IMM;
  const uint32_t payload = std::min(config_.mtu, pt.length - st.sent[i]);
  IbPacketPtr p = packet(st.m, pt.rail);
  p->first = !st.started[i];
  p->msg_offset = pt.offset + st.sent[i];
  p->remote_addr = w.remote_addr + p->msg_offset;
  p->data.resize(payload);
  st.started[i] = true;
  st.sent[i] += payload;
  p->last = st.sent[i] >= pt.length;
  p->wire_bytes = config_.header_bytes + payload + (p->first && rdma ? config_.reth_bytes : 0) +
                  (p->last && w.opcode != IB_OP_RDMA_WRITE ? config_.imm_bytes : 0);
  *src = w.local_addr + p->msg_offset;
  *out = std::move(p);
  // The next part with packets left, after this one; none: the message is made.
  const size_t n = st.m.parts.size();
  size_t k = 1;
  for (; k <= n; ++k) {
    const size_t j = (i + k) % n;
    if (!st.started[j] || st.sent[j] < st.m.parts[j].length) break;
  }
  if (k <= n) {
    st.part = (i + k) % n;
  } else {
    it->second.pop_front();
    if (it->second.empty()) queues_.erase(it);
  }
  return true;
}

}  // namespace p2
