#include "ib/hca.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/clock.h"
#include "ib/transport.h"

namespace p2 {

using sc_core::sc_time;

Hca::Hca(sc_core::sc_module_name name, unsigned node, unsigned nodes, const IbConfig& config)
    : sc_module(name), node_(node), nodes_(nodes), config_(config), agenda_("agenda"),
      responder_(node, config_, agenda_, responder_host()), msn_to_(nodes, 0), recv_(nodes) {
  for (uint32_t t = 0; t < config_.max_reads; ++t) free_tags_.push_back(static_cast<uint8_t>(t));
}

// What the responder of RDMA READ and atomics asks of this HCA.
IbResponder::Host Hca::responder_host() {
  IbResponder::Host h;
  h.send = [this](IbPacketPtr p, uint64_t src) {
    build_packet(std::move(p), src);
    issue_reads();
  };
  h.read_word = [this](uint64_t addr) {
    Read r;
    r.kind = Read::Kind::Atomic;
    r.addr = addr;
    r.length = IB_ATOMIC_BYTES;
    fetch_reads_.push_back(std::move(r));
    issue_reads();
  };
  h.write = [this](uint64_t addr, const uint8_t* data, uint32_t len) { write_host(addr, data, len); };
  h.packet_id = [this] { return (static_cast<uint64_t>(node_) << 48) | next_packet_id_++; };
  h.reads_served = &stats_.reads_served;
  h.atomics_served = &stats_.atomics_served;
  return h;
}

void Hca::attach_pcie(LinkPort& port) {
  pcie_ = &port;
  port.attach(this, config_.pcie_tx_tlps);
  port.allow_silent_arrivals();
}

void Hca::attach_rail(unsigned rail, IbPort& port) {
  rails_.at(rail) = &port;
  port.attach(this, rail);
}

// ---- Registers ---------------------------------------------------------------

uint64_t Hca::reg_peek(uint64_t r) const {
  switch (r) {
    case IB_REG_HCA_ID: return IB_HCA_ID_VALUE;
    case IB_REG_NODE_ID: return node_;
    case IB_REG_NUM_NODES: return nodes_;
    case IB_REG_PORTS: return IB_PORTS;
    case IB_REG_LID: return node_ + 1;
    case IB_REG_MTU: return config_.mtu;
    case IB_REG_ERROR: return error_;
    case IB_REG_SQ_BASE: return sq_base_;
    case IB_REG_SQ_SIZE: return sq_size_;
    case IB_REG_SQ_DOORBELL: return sq_prod_;
    case IB_REG_SQ_CONSUMED: return sq_fetched_;
    case IB_REG_RQ_BASE: return rq_base_;
    case IB_REG_RQ_SIZE: return rq_size_;
    case IB_REG_RQ_DOORBELL: return rq_prod_;
    case IB_REG_RQ_CONSUMED: return rq_used_;
    case IB_REG_CQ_BASE: return cq_base_;
    case IB_REG_CQ_SIZE: return cq_size_;
    case IB_REG_CQ_HEAD: return cq_head_;
    case IB_REG_CQ_TAIL: return cq_tail_;
    case IB_REG_CQ_OVERFLOW: return cq_overflow_;
    default: return 0;
  }
}

void Hca::mmio_write(uint64_t r, uint64_t v) {
  const sc_time now = sim_time();
  switch (r) {
    case IB_REG_SQ_BASE:
      sq_base_ = v;
      sq_prod_ = sq_fetched_ = 0;
      ++sq_generation_;
      wqe_fetching_ = false;
      doorbells_.clear();
      break;
    case IB_REG_SQ_SIZE: sq_size_ = v; break;
    case IB_REG_SQ_DOORBELL:
      if (v > sq_prod_ && v - sq_fetched_ <= sq_size_) {
        for (uint64_t i = sq_prod_; i < v; ++i) doorbells_.push_back(now);
        sq_prod_ = v;
        agenda_.after(config_.doorbell, [this] { fetch_wqes(); });
      }
      break;
    case IB_REG_RQ_BASE:
      rq_base_ = v;
      rq_prod_ = rq_fetched_ = rq_used_ = 0;
      ++rq_generation_;
      rqe_fetching_ = false;
      rq_cache_.clear();
      break;
    case IB_REG_RQ_SIZE: rq_size_ = v; break;
    case IB_REG_RQ_DOORBELL:
      if (v > rq_prod_ && v - rq_used_ <= rq_size_) {
        rq_prod_ = v;
        agenda_.after(config_.doorbell, [this] { fetch_rqes(); });
      }
      break;
    case IB_REG_CQ_BASE:
      cq_base_ = v;
      cq_head_ = cq_tail_ = cq_overflow_ = 0;
      break;
    case IB_REG_CQ_SIZE: cq_size_ = v; break;
    case IB_REG_CQ_TAIL: cq_tail_ = v; break;
    default: break;
  }
  changed();
}

// ---- PCIe --------------------------------------------------------------------

void Hca::pcie_send(TlpPtr tlp) {
  tlp->id = (static_cast<uint64_t>(node_) << 48) | (1ULL << 47) | next_tlp_id_++;
  if (tlp->is_request()) {
    tlp->born = sim_time();
    ++tlps_created_;
  }
  pcie_out_.push_back(std::move(tlp));
  pcie_drain();
}

void Hca::pcie_drain() {
  while (!pcie_out_.empty() && pcie_->can_send()) {
    pcie_->send(std::move(pcie_out_.front()));
    pcie_out_.pop_front();
  }
}

void Hca::tx_space(LinkPort&) {
  pcie_drain();
  issue_reads();
  for (unsigned r = 0; r < IB_PORTS; ++r) process_rx(r);
}

void Hca::write_host(uint64_t addr, const uint8_t* data, uint32_t len) {
  for (const Span& s : split_write(addr, len, config_.max_payload)) {
    auto w = std::make_unique<Tlp>();
    w->kind = TlpKind::MemWrite;
    w->addr = s.addr;
    w->length = s.length;
    w->requester = requester_id(node_, Function::Hca);
    w->data.assign(data + (s.addr - addr), data + (s.addr - addr) + s.length);
    pcie_send(std::move(w));
  }
}

// Descriptor fetches first, then the data of the packets being built; the
// send engine makes the next packet once the last one's reads are all
// issued, so that connections share the read tags packet by packet.
void Hca::issue_reads() {
  while (!free_tags_.empty() && pcie_out_.size() < config_.pcie_tx_tlps) {
    if (fetch_reads_.empty() && data_reads_.empty()) {
      if (!make_packet()) break;
      continue;  // its reads, if it has any
    }
    auto& from = !fetch_reads_.empty() ? fetch_reads_ : data_reads_;
    Read r = std::move(from.front());
    from.pop_front();
    const uint8_t tag = free_tags_.front();
    free_tags_.erase(free_tags_.begin());
    auto t = std::make_unique<Tlp>();
    t->kind = TlpKind::MemRead;
    t->addr = r.addr;
    t->length = r.length;
    t->requester = requester_id(node_, Function::Hca);
    t->tag = tag;
    ++stats_.dma_reads;
    stats_.dma_read_bytes += r.length;
    reads_[tag] = std::move(r);
    read_out_[tag] = true;
    pcie_send(std::move(t));
  }
}

void Hca::tlp_arrived(LinkPort& port, TlpPtr tlp) {
  port.release(*tlp);
  switch (tlp->kind) {
    case TlpKind::MemWrite: {
      if (!ib_addr_is_regs(tlp->addr) || tlp->length != 8) return;
      uint64_t v;
      std::memcpy(&v, tlp->data.data(), 8);
      const uint64_t reg = p2_addr_offset(tlp->addr) - IB_REGS_OFFSET;
      agenda_.after(config_.reg, [this, reg, v] { mmio_write(reg, v); });
      return;
    }
    case TlpKind::MemRead: {
      auto req = std::make_shared<Tlp>(*tlp);
      agenda_.after(config_.reg, [this, req] {
        if (!ib_addr_is_regs(req->addr) || req->length != 8) {
          pcie_send(make_completion(*req, CplStatus::UnsupportedRequest));
          return;
        }
        uint64_t v = reg_peek(p2_addr_offset(req->addr) - IB_REGS_OFFSET);
        uint8_t b[8];
        std::memcpy(b, &v, 8);
        pcie_send(make_completion(*req, req->addr, b, 8, 8));
      });
      return;
    }
    case TlpKind::Completion: {
      if (!read_out_[tlp->tag]) return;
      Read& r = reads_[tlp->tag];
      read_done(r, *tlp);
      if (tlp->status != CplStatus::Success || tlp->byte_count <= tlp->length) {
        // Last completion of the read (or its failure): the tag is free again.
        Read done = std::move(r);
        r = Read{};
        read_out_[tlp->tag] = false;
        free_tags_.push_back(tlp->tag);
        if (done.kind == Read::Kind::Wqe && done.generation == sq_generation_) {
          ib_wqe w{};
          std::memcpy(&w, done.buf.data(), std::min<size_t>(sizeof w, done.buf.size()));
          ++sq_fetched_;
          sc_time db = doorbells_.empty() ? sim_time() : doorbells_.front();
          if (!doorbells_.empty()) doorbells_.pop_front();
          wqe_fetching_ = false;
          changed();
          agenda_.after(config_.wqe, [this, w, db] { start_message(w, db); });
          fetch_wqes();
        } else if (done.kind == Read::Kind::Atomic) {
          responder_.atomic_read_done(done.buf);
        } else if (done.kind == Read::Kind::Rqe && done.generation == rq_generation_) {
          ib_rqe e{};
          std::memcpy(&e, done.buf.data(), std::min<size_t>(sizeof e, done.buf.size()));
          ++rq_fetched_;
          rq_cache_.push_back(e);
          rqe_fetching_ = false;
          fetch_rqes();
          for (unsigned rail = 0; rail < IB_PORTS; ++rail) process_rx(rail);
        }
        issue_reads();
      }
      return;
    }
  }
}

// A completion of an outstanding read that is not its last only copies its
// bytes (read_done): the read, and the packet or descriptor it fills, stay
// incomplete until the last one, which arrives after it on the same link.
bool Hca::arrival_is_silent(const LinkPort& /*port*/, const Tlp& tlp) const {
  return tlp.kind == TlpKind::Completion && tlp.status == CplStatus::Success &&
         tlp.byte_count > tlp.length && read_out_[tlp.tag];
}

void Hca::read_done(Read& r, const Tlp& cpl) {
  const bool ok = cpl.status == CplStatus::Success;
  const uint32_t len = ok ? cpl.length : r.length - r.received;
  const uint32_t off = ok ? static_cast<uint32_t>(cpl.addr - r.addr) : r.received;
  if (!ok) ++stats_.errors;
  r.received += len;
  if (r.kind != Read::Kind::Data) {
    r.buf.resize(r.length);
    if (ok) std::memcpy(r.buf.data() + off, cpl.data.data(), len);
    return;
  }
  Packet* pk = r.packet;
  if (ok) std::memcpy(pk->p->data.data() + r.packet_offset + off, cpl.data.data(), len);
  pk->have += len;
  if (pk->have == pk->need) packet_ready(pk);
}

// ---- Send side ---------------------------------------------------------------

void Hca::fetch_wqes() {
  if (wqe_fetching_ || !sq_base_ || !sq_size_ || sq_fetched_ >= sq_prod_) return;
  wqe_fetching_ = true;
  Read r;
  r.kind = Read::Kind::Wqe;
  r.addr = sq_base_ + IB_WQE_SIZE * (sq_fetched_ % sq_size_);
  r.length = IB_WQE_SIZE;
  r.generation = sq_generation_;
  fetch_reads_.push_back(std::move(r));
  issue_reads();
}

void Hca::fetch_rqes() {
  if (rqe_fetching_ || !rq_base_ || !rq_size_ || rq_fetched_ >= rq_prod_) return;
  rqe_fetching_ = true;
  Read r;
  r.kind = Read::Kind::Rqe;
  r.addr = rq_base_ + IB_RQE_SIZE * (rq_fetched_ % rq_size_);
  r.length = IB_RQE_SIZE;
  r.generation = rq_generation_;
  fetch_reads_.push_back(std::move(r));
  issue_reads();
}

bool Hca::local_ok(uint64_t addr, uint64_t len) const { return ib_local_ok(config_, node_, addr, len); }

// Whether a read or atomic finds its rails' initiator depth free (anything
// else, and a request that fails its checks, needs none).
bool Hca::initiator_depth_ok(const ib_wqe& w) const {
  if (!ib_is_read_or_atomic(w.opcode) || ib_check_wqe(config_, node_, nodes_, w) != IB_OK) return true;
  unsigned rail = next_rail_;
  for (const IbPart& pt : ib_plan_parts(config_, w, rail))
    if (rd_out_[pt.rail] >= config_.max_rd_atomic) return false;
  return true;
}

// The send queue is processed in order: a WQE waits while an earlier one
// waits for the initiator depth.
void Hca::start_message(const ib_wqe& w, sc_time doorbell) {
  if (!stalled_.empty() || !initiator_depth_ok(w)) {
    ++stats_.rd_atomic_waits;
    stalled_.emplace_back(w, doorbell);
    return;
  }
  start_now(w, doorbell);
}

void Hca::resume_stalled() {
  while (!stalled_.empty() && initiator_depth_ok(stalled_.front().first)) {
    const auto [w, doorbell] = stalled_.front();
    stalled_.pop_front();
    start_now(w, doorbell);
  }
}

// A packet whose payload is read from local memory at src_addr (nothing to
// read: ready at once), in the build order its rail sends in.
Hca::Packet* Hca::build_packet(IbPacketPtr p, uint64_t src_addr) {
  auto pk = std::make_unique<Packet>();
  const uint32_t payload = static_cast<uint32_t>(p->data.size());
  const unsigned rail = p->rail;
  pk->p = std::move(p);
  pk->need = payload;
  Packet* raw = pk.get();
  building_.push_back(std::move(pk));
  ++building_on_[rail];
  for (const Span& s : split_read(src_addr, payload, config_.max_read_request)) {
    Read r;
    r.kind = Read::Kind::Data;
    r.addr = s.addr;
    r.length = s.length;
    r.packet = raw;
    r.packet_offset = static_cast<uint32_t>(s.addr - src_addr);
    data_reads_.push_back(std::move(r));
  }
  if (payload == 0) packet_ready(raw);
  return raw;
}

void Hca::start_now(const ib_wqe& w, sc_time doorbell) {
  ++stats_.wqes;
  Message m;
  m.wqe = w;
  m.id = next_msg_id_++;
  m.doorbell = doorbell;
  const uint8_t status = ib_check_wqe(config_, node_, nodes_, w);
  if (status != IB_OK) {
    ++stats_.errors;
    error_ = status;
    m.status = status;
    m.msn = 0;
    m.last_rail = w.rail == IB_RAIL_ANY ? 0 : w.rail;
    messages_.emplace(m.id, m);
    finish_message(messages_.at(m.id));
    changed();
    return;
  }
  m.msn = ++msn_to_[w.dest_node];
  if (traffic_ && w.dest_node != node_) {
    const bool read = w.opcode == IB_OP_RDMA_READ;
    traffic_->on_transfer(read ? w.dest_node : node_, read ? node_ : w.dest_node, w.length, "ib", "-", "-");
  }
  const std::vector<IbPart> parts = ib_plan_parts(config_, w, next_rail_);
  m.parts = static_cast<unsigned>(parts.size());
  m.last_rail = parts.back().rail;
  messages_.emplace(m.id, m);
  IbConnections::Message msg{w, m.id, m.msn, doorbell, parts};
  if (ib_is_read_or_atomic(w.opcode)) {
    // One request per part, its responses carrying the data; the initiator
    // depth is taken now, and the requests go out in their connection's
    // order: at once, or behind the packets of a message before them.
    for (const IbPart& pt : parts) ++rd_out_[pt.rail];
    if (!connections_.busy(w.dest_node)) {
      for (IbPacketPtr& p : connections_.requests(msg)) build_packet(std::move(p), 0);
      issue_reads();
      return;
    }
  }
  connections_.add(msg);
  issue_reads();
}

// The send engine's next packet (connections.h), its data to be read.
bool Hca::make_packet() {
  IbPacketPtr p;
  uint64_t src = 0;
  if (!connections_.next(&p, &src)) return false;
  build_packet(std::move(p), src);
  return true;
}

// A rail sends its packets in the order they were made, whatever order their
// reads complete in (host and GPU memory answer at different speeds): a
// reliable connection delivers in order, which is what lets a SEND behind an
// RDMA write on the same rail announce the write's data (MVAPICH2's RPUT
// finish does exactly that).
void Hca::packet_ready(Packet* pk) {
  pk->ready = true;
  // A rail is done once its first packet still building is not ready (or it
  // has none): stop when every rail is.
  bool blocked[IB_PORTS];
  unsigned read_responses[IB_PORTS] = {};
  for (unsigned r = 0; r < IB_PORTS; ++r) blocked[r] = building_on_[r] == 0;
  for (auto it = building_.begin(); it != building_.end();) {
    if (std::all_of(std::begin(blocked), std::end(blocked), [](bool b) { return b; })) break;
    const unsigned rail = (*it)->p->rail;
    if (blocked[rail] || !(*it)->ready) {
      blocked[rail] = true;
      ++it;
      continue;
    }
    const IbPacket& q = *(*it)->p;
    if (q.kind == IbPacket::Kind::Response && q.opcode == IB_OP_RDMA_READ && !q.data.empty())
      ++read_responses[rail];
    auto p = std::make_shared<IbPacketPtr>(std::move((*it)->p));
    it = building_.erase(it);
    --building_on_[rail];
    agenda_.after(config_.tx, [this, p] {
      const unsigned r = (*p)->rail;
      tx_[r].push_back(std::move(*p));
      rail_drain(r);
    });
  }
  // The responder builds a rail's next read responses as these leave.
  for (unsigned r = 0; r < IB_PORTS; ++r)
    for (unsigned k = 0; k < read_responses[r]; ++k) responder_.response_ready(r);
}

void Hca::tx_ready(IbPort& port) { rail_drain(port.tag()); }

void Hca::rail_drain(unsigned rail) {
  auto& q = tx_[rail];
  while (!q.empty() && rails_[rail]->ready(q.front()->wire_bytes)) {
    ++stats_.packets_out[rail];
    rails_[rail]->send(std::move(q.front()), sim_time());
    q.pop_front();
  }
}

void Hca::finish_message(Message& m) {
  const ib_wqe& w = m.wqe;
  if ((w.flags & IB_WQE_SIGNALED) || m.status != IB_OK) {
    ib_cqe e{};
    e.kind = w.opcode == IB_OP_SEND         ? IB_CQE_SEND
             : w.opcode == IB_OP_RDMA_READ  ? IB_CQE_RDMA_READ
             : ib_is_atomic(w.opcode)       ? IB_CQE_ATOMIC
                                            : IB_CQE_RDMA_WRITE;
    e.status = m.status;
    e.src_node = w.dest_node;
    e.byte_len = w.length;
    e.imm = w.imm;
    e.wr_id = w.wr_id;
    e.msn = m.msn;
    e.rail = static_cast<uint16_t>(m.last_rail);
    write_cqe(e);
  }
  if (m.status == IB_OK) {
    ++stats_.messages_sent;
    stats_.bytes_sent += w.length;
    const sc_time lat = sim_time() - m.doorbell;
    if (stats_.messages_sent == 1 || lat < stats_.latency_min) stats_.latency_min = lat;
    stats_.latency_max = std::max(stats_.latency_max, lat);
    stats_.latency_total += lat;
  }
  messages_.erase(m.id);
}

void Hca::write_cqe(ib_cqe e) {
  if (!cq_base_ || !cq_size_ || cq_head_ - cq_tail_ >= cq_size_) {
    ++cq_overflow_;
    changed();
    return;
  }
  e.serial = ib_cqe_serial(cq_head_);
  const uint64_t addr = cq_base_ + IB_CQE_SIZE * (cq_head_ % cq_size_);
  ++cq_head_;
  ++stats_.cqes;
  write_host(addr, reinterpret_cast<const uint8_t*>(&e), sizeof e);
  changed();
}

// ---- Receive side ------------------------------------------------------------

void Hca::packet_arrived(IbPort& port, IbPacketPtr p, sc_time tail) {
  const unsigned rail = port.tag();
  ++stats_.packets_in[rail];
  auto shared = std::make_shared<IbPacketPtr>(std::move(p));
  agenda_.at(tail + config_.rx, [this, rail, shared] {
    const uint32_t wire = (*shared)->wire_bytes;
    rx_[rail].emplace_back(std::move(*shared), wire);
    process_rx(rail);
  });
}

void Hca::process_rx(unsigned rail) {
  auto& q = rx_[rail];
  while (!q.empty() && pcie_out_.size() < config_.pcie_tx_tlps) {
    IbPacket& p = *q.front().first;
    const uint32_t wire = q.front().second;
    if (p.kind == IbPacket::Kind::Ack) {
      auto it = messages_.find(p.msg_id);
      if (it != messages_.end()) {
        Message& m = it->second;
        if (p.status != IB_OK) m.status = p.status;
        if (++m.acked == m.parts) {
          const uint64_t id = m.id;
          agenda_.after(config_.cqe, [this, id] {
            auto f = messages_.find(id);
            if (f != messages_.end()) finish_message(f->second);
          });
        }
      }
      rails_[rail]->release(wire);
      q.pop_front();
      continue;
    }
    if (p.kind == IbPacket::Kind::Response || ib_is_read_or_atomic(p.opcode)) {
      if (p.kind == IbPacket::Kind::Response)
        response_arrived(p, rail);
      else  // a request: the responder's
        responder_.request(p, rail);
      rails_[rail]->release(wire);
      q.pop_front();
      continue;
    }
    RecvState& st = recv_.at(p.src)[rail];
    const bool wants_rqe = p.opcode == IB_OP_SEND || p.opcode == IB_OP_RDMA_WRITE_IMM;
    if (p.first) {
      st = RecvState{};
      if (wants_rqe) {
        if (rq_cache_.empty()) {
          if (!rx_busy_[rail]) ++stats_.rnr_waits;
          rx_busy_[rail] = true;  // waits for a receive buffer
          return;
        }
        rx_busy_[rail] = false;
        st.rqe = rq_cache_.front();
        rq_cache_.pop_front();
        ++rq_used_;
        changed();
        fetch_rqes();
      }
      st.active = true;
    }
    // Placement.
    const uint32_t len = static_cast<uint32_t>(p.data.size());
    if (len && st.status == IB_OK) {
      uint64_t dst;
      uint32_t n = len;
      if (p.opcode == IB_OP_SEND) {
        dst = st.rqe.addr + p.msg_offset;
        if (p.msg_offset + static_cast<uint64_t>(len) > st.rqe.length) {
          n = p.msg_offset < st.rqe.length ? st.rqe.length - p.msg_offset : 0;
          st.status = IB_ERR_LENGTH;
        }
        if (n && !local_ok(dst, n)) {
          st.status = IB_ERR_RECV_BUFFER;
          n = 0;
        }
      } else {
        dst = p.remote_addr;
        if (!local_ok(dst, len)) {
          st.status = IB_ERR_REMOTE;
          n = 0;
        }
      }
      if (n) write_host(dst, p.data.data(), n);
      st.bytes += n;
      stats_.bytes_received += n;
    }
    rails_[rail]->release(wire);
    if (p.last) {
      ++stats_.messages_received;
      if (wants_rqe) {
        ib_cqe e{};
        e.kind = p.opcode == IB_OP_SEND ? IB_CQE_RECV : IB_CQE_RECV_IMM;
        e.status = st.status;
        e.src_node = static_cast<uint16_t>(p.src);
        e.byte_len = p.opcode == IB_OP_SEND ? st.bytes : p.msg_length;
        e.imm = p.imm;
        e.wr_id = st.rqe.wr_id;
        e.msn = p.msn;
        e.rail = static_cast<uint16_t>(rail);
        agenda_.after(config_.cqe, [this, e] { write_cqe(e); });
      }
      auto ack = std::make_shared<IbPacketPtr>(std::make_unique<IbPacket>());
      IbPacket& a = **ack;
      a.kind = IbPacket::Kind::Ack;
      a.src = node_;
      a.dst = p.src;
      a.rail = rail;
      a.msg_id = p.msg_id;
      a.msn = p.msn;
      a.status = st.status;
      a.wire_bytes = config_.ack_bytes;
      a.id = (static_cast<uint64_t>(node_) << 48) | next_packet_id_++;
      a.born = sim_time();
      agenda_.after(config_.ack, [this, ack, rail] {
        tx_[rail].push_back(std::move(*ack));
        rail_drain(rail);
      });
      st.active = false;
    }
    q.pop_front();
  }
}

// ---- RDMA READ and atomics at the requester ----------------------------------

// A response at the requester: its data placed at local_addr; the part is
// done with its last packet, the message with its last part (the completion
// then written behind the data).
void Hca::response_arrived(IbPacket& p, unsigned rail) {
  auto it = messages_.find(p.msg_id);
  if (it == messages_.end()) return;
  Message& m = it->second;
  if (p.status != IB_OK) {
    m.status = p.status;
  } else if (ib_is_atomic(p.opcode)) {
    write_host(m.wqe.local_addr, reinterpret_cast<const uint8_t*>(&p.atomic_old), IB_ATOMIC_BYTES);
  } else if (!p.data.empty()) {
    write_host(m.wqe.local_addr + p.msg_offset, p.data.data(), static_cast<uint32_t>(p.data.size()));
    stats_.bytes_received += p.data.size();
  }
  if (!p.last) return;
  --rd_out_[rail];
  if (++m.acked == m.parts) {
    const uint64_t id = m.id;
    agenda_.after(config_.cqe, [this, id] {
      auto f = messages_.find(id);
      if (f != messages_.end()) finish_message(f->second);
    });
  }
  resume_stalled();
}

std::string Hca::describe_stall() const {
  for (unsigned r = 0; r < IB_PORTS; ++r)
    if (!rx_[r].empty() && rx_busy_[r])
      return "node " + std::to_string(node_) + " rail " + std::to_string(r) + ": a message from node " +
             std::to_string(rx_[r].front().first->src) +
             " waits for a receive buffer (none posted on the receive queue)";
  return "";
}

}  // namespace p2
