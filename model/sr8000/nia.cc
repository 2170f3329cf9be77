#include "sr8000/nia.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>

#include "sr8000/barrier.h"
#include "sr8000/link.h"

namespace p2 {

using sc_core::sc_time;

Nia::Nia(unsigned node, const Sr8000Config& config, Host& host, Agenda& agenda,
         SrFabric& net)
    : node_(node), config_(config), host_(host), agenda_(agenda), net_(net) {}

// ---- Registers ----------------------------------------------------------------

void Nia::mmio_write(uint64_t offset, uint64_t value) {
  agenda_.after(config_.mmio_post, [this, offset, value] { reg_write(offset, value); });
}

void Nia::mmio_read(uint64_t offset, std::function<void(uint64_t, bool)> done) {
  // Sampled when the load reaches the NIA (after the stores issued before it),
  // answered when its data is back at the CPU.
  const sc_time back = config_.reg_read > config_.mmio_post ? config_.reg_read - config_.mmio_post
                                                            : sc_core::SC_ZERO_TIME;
  agenda_.after(config_.mmio_post, [this, offset, back, done = std::move(done)] {
    const uint64_t v = peek(offset);
    agenda_.after(back, [v, done] { done(v, true); });
  });
}

uint64_t Nia::peek(uint64_t off) const {
  if (off == SR_REG_ID) return SR_NIA_ID;
  if (off == SR_REG_NODE_ID) return node_;
  if (off == SR_REG_NUM_NODES) return config_.nodes;
  if (off == SR_REG_SHAPE) return SR_SHAPE(config_.x, config_.y, config_.z);
  if (off == SR_REG_ERROR) return error_;
  if (off == SR_REG_ERRORS) return stats_.rx_errors + stats_.tcw_errors;
  if (off == SR_REG_KICKS) return stats_.kicks;
  if (off == SR_REG_KICKS_REUSED) return stats_.kicks_reused;
  if (off >= SR_REG_AREA_BASE(0) && off < SR_REG_AREA_BASE(SR_AREAS)) {
    const unsigned a = static_cast<unsigned>((off - SR_REG_AREA_BASE(0)) / 0x10);
    return (off - SR_REG_AREA_BASE(0)) % 0x10 == 0 ? area_base_[a] : area_size_[a];
  }
  if (off >= SR_REG_GROUP(0) && off < SR_REG_GROUP(SR_COLORS)) {
    const unsigned c = static_cast<unsigned>((off - SR_REG_GROUP(0)) / 0x40);
    switch ((off - SR_REG_GROUP(0)) % 0x40) {
      case 0x00: return group_[c];
      case 0x08: return group_status_[c];
      case 0x18: return bar_state_[c];
      case 0x20: return arm_[c];
      case 0x28: return arm_size_[c];
      case 0x30: return bcast_state_[c];
      default: return 0;
    }
  }
  return 0;
}

sr_status Nia::check_group(uint64_t group) const {
  for (unsigned d = 0; d < 3; ++d)
    if (SR_GROUP_COUNT(group, d) == 0) return SR_ERR_GROUP_EMPTY;
  if (group >> 48 || !config_.group_fits(group)) return SR_ERR_GROUP_SHAPE;
  return config_.in_group(group, node_) ? SR_OK : SR_ERR_GROUP_SELF;
}

void Nia::reg_write(uint64_t off, uint64_t v) {
  if (off >= SR_REG_AREA_BASE(0) && off < SR_REG_AREA_BASE(SR_AREAS)) {
    const unsigned a = static_cast<unsigned>((off - SR_REG_AREA_BASE(0)) / 0x10);
    if ((off - SR_REG_AREA_BASE(0)) % 0x10 == 0) {
      area_base_[a] = v;
      area_size_[a] = 0;  // a moved area is unmapped until its size is set
    } else if (v == 0 || host_.translate(area_base_[a], v)) {
      area_size_[a] = v;
    } else {
      area_size_[a] = 0;
      error_ = SR_ERR_AREA;
    }
    notify();
    return;
  }
  if (off == SR_REG_KICK || off == SR_REG_BCAST_KICK) {
    kicks_.push_back({v, off == SR_REG_BCAST_KICK, sim_time()});
    start_next();
    return;
  }
  if (off >= SR_REG_GROUP(0) && off < SR_REG_GROUP(SR_COLORS)) {
    const unsigned c = static_cast<unsigned>((off - SR_REG_GROUP(0)) / 0x40);
    switch ((off - SR_REG_GROUP(0)) % 0x40) {
      case 0x00:
        group_[c] = v;
        group_status_[c] = check_group(v);
        break;
      case 0x10:
        if (group_status_[c] != SR_OK || group_[c] == 0)
          agenda_.after(config_.barrier_signal,
                        [this, c] { barrier_released(c, SR_ERR_GROUP_UNSET); });
        else
          net_.barrier().arrive(node_, c, group_[c]);
        break;
      case 0x20:
        arm_[c] = v;
        armed_[c] = true;
        break;
      case 0x28:
        arm_size_[c] = v;
        break;
      default:
        return;  // read-only
    }
    notify();
  }
}

void Nia::barrier_released(unsigned color, unsigned status) {
  stats_.barriers++;
  bar_state_[color] = ((SR_STATE_COUNT(bar_state_[color]) + 1ull) & SR_STATE_COUNT_MASK) |
                      (static_cast<uint64_t>(status) << 32);
  notify();
}

// ---- Send engine ----------------------------------------------------------------

sr_status Nia::check_tcw(const sr_tcw& t, bool broadcast) const {
  if (t.flags & ~SR_TCW_FLAGS_KNOWN) return SR_ERR_TCW_FLAGS;
  if (broadcast) {
    if (t.flags & SR_TCW_FLAG) return SR_ERR_TCW_FLAGS;  // a broadcast writes no flag
    if (t.dst_node >= SR_COLORS) return SR_ERR_COLOR;
    if (group_[t.dst_node] == 0 || group_status_[t.dst_node] != SR_OK) return SR_ERR_GROUP_UNSET;
  } else if (t.dst_node >= config_.nodes) {
    return SR_ERR_NODE;
  }
  if (t.size > SR_TCW_MAX_SIZE || (t.size > 0 && !host_.translate(t.src, t.size))) return SR_ERR_SRC;
  return SR_OK;
}

void Nia::start_next() {
  if (engine_busy_ || kicks_.empty()) return;
  const Kick k = kicks_.front();
  kicks_.pop_front();
  engine_busy_ = true;
  stats_.kicks++;
  const uint8_t* mem = k.addr % SR_TCW_ALIGN == 0 ? host_.translate(k.addr, SR_TCW_BYTES) : nullptr;
  if (!mem) {
    // Nowhere to write a status: the error is the NIA's own.
    stats_.tcw_errors++;
    error_ = SR_ERR_TCW_ADDR;
    notify();
    agenda_.after(config_.kick_modified, [this] {
      engine_busy_ = false;
      start_next();
    });
    return;
  }
  sr_tcw now{};
  std::memcpy(&now, mem, SR_TCW_DESC_BYTES);
  auto hit = std::find_if(cache_.begin(), cache_.end(), [&](const CachedTcw& c) { return c.addr == k.addr; });
  const bool reused = hit != cache_.end() && hit->tcw.version == now.version;
  sr_tcw t{};
  if (reused) {
    // The cached translation: the TCW in memory is not read again.
    t = hit->tcw;
    cache_.splice(cache_.begin(), cache_, hit);
    stats_.kicks_reused++;
  } else {
    if (hit != cache_.end()) cache_.erase(hit);
    t = now;
    cache_.push_front({k.addr, now});
    while (cache_.size() > config_.tcw_cache_entries) cache_.pop_back();
  }
  agenda_.after(reused ? config_.kick_reuse : config_.kick_modified, [this, k, t] { run_tcw(k, t); });
}

void Nia::finish_tcw(const Kick& k, sc_time at, sr_status status) {
  agenda_.at(at + config_.mem_write_latency, [this, k, status] {
    const uint64_t word = SR_TCW_DONE | static_cast<uint64_t>(status);
    host_.bus_write(k.addr + SR_TCW_DESC_BYTES, reinterpret_cast<const uint8_t*>(&word), 8);
    stats_.tcw_latency_total += sim_time() - k.at;
  });
}

void Nia::run_tcw(const Kick& k, const sr_tcw& t) {
  const sc_time t0 = sim_time();
  const sr_status st = check_tcw(t, k.broadcast);
  if (st != SR_OK) {
    stats_.tcw_errors++;
    finish_tcw(k, t0, st);
    engine_busy_ = false;
    start_next();
    return;
  }
  const uint64_t message = ++messages_;
  const uint64_t pkt = config_.packet_bytes;
  const uint64_t count = t.size == 0 ? 1 : (t.size + pkt - 1) / pkt;
  std::vector<SrLink*> route =
      k.broadcast ? net_.broadcast_route(node_) : net_.route(node_, t.dst_node);
  if (k.broadcast) stats_.broadcasts_sent++;
  if (traffic_)
    for (unsigned n = 0; n < config_.nodes; ++n)
      if (n != node_ && (k.broadcast ? config_.in_group(group_[t.dst_node], n) : n == t.dst_node))
        traffic_->on_transfer(node_, n, t.size, "sr8000", "host", "host");
  sc_time last_inject = t0;
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t from = i * pkt;
    const uint64_t len = std::min<uint64_t>(pkt, t.size - std::min(t.size, from));
    // Packet i leaves once its bytes are read, after the header is built.
    sc_time inject = t0 + config_.packet_setup;
    if (t.size > 0) inject += config_.mem_read_latency + config_.mem_read(from + len);
    last_inject = inject;
    auto p = std::make_shared<SrPacket>();
    p->kind = k.broadcast ? SrPacketKind::Broadcast : SrPacketKind::Write;
    p->src = node_;
    p->dst = k.broadcast ? node_ : t.dst_node;
    p->color = k.broadcast ? t.dst_node : 0;
    p->group = k.broadcast ? group_[t.dst_node] : 0;
    p->message = message;
    p->area = t.dst_area;
    p->offset = t.dst_offset + from;
    p->message_offset = t.dst_offset;
    p->message_bytes = t.size;
    p->first = i == 0;
    p->last = i + 1 == count;
    p->flag = p->last && (t.flags & SR_TCW_FLAG);
    p->flag_area = t.flag_area;
    p->flag_offset = t.flag_offset;
    p->flag_value = t.flag_value;
    p->route = route;
    const uint64_t src = t.src + from;
    agenda_.at(inject, [this, p, src, len, k] {
      // The bytes as they are in memory when the NIA reads them.
      if (len) {
        const uint8_t* b = host_.translate(src, len);
        p->data.assign(b, b + len);
      }
      p->born = sim_time();
      stats_.packets_sent++;
      stats_.bytes_sent += len;
      if (p->route.empty()) {
        accept(p, nullptr);  // to itself: no link crossed
        if (p->last) finish_tcw(k, sim_time(), SR_OK);
      } else if (p->last && k.broadcast) {
        // A broadcast is done once its last packet's tail has left the node.
        p->route[0]->send(p, [this, k] { finish_tcw(k, sim_time(), SR_OK); });
      } else if (p->last) {
        // A remote write is done when its destination acknowledges it.
        awaiting_ack_.emplace(p->message, k);
        p->route[0]->send(p);
      } else {
        p->route[0]->send(p);
      }
    });
  }
  // The next TCW starts once this one's last packet is handed to the link.
  agenda_.at(last_inject, [this] {
    engine_busy_ = false;
    start_next();
  });
}

std::string Nia::describe_word(uint64_t addr) const {
  char out[160];
  for (const auto& w : awaiting_ack_)
    if (addr == w.second.addr + SR_TCW_DESC_BYTES) {
      std::snprintf(out, sizeof out, "the status of the TCW at 0x%llx (sent; its destination's acknowledgement not back yet)",
                    static_cast<unsigned long long>(w.second.addr));
      return out;
    }
  for (const CachedTcw& c : cache_)
    if (addr == c.addr + SR_TCW_DESC_BYTES) {
      std::snprintf(out, sizeof out, "the status of the TCW at 0x%llx (%s)",
                    static_cast<unsigned long long>(c.addr),
                    engine_busy_ || !kicks_.empty() ? "the NIA is sending" : "no kick of it pending");
      return out;
    }
  // The smallest mapped area holding the word: FMPL's flag and header areas
  // lie inside area 0 (all of node memory).
  int best = -1;
  for (unsigned a = 0; a < SR_AREAS; ++a)
    if (area_size_[a] && addr >= area_base_[a] && addr - area_base_[a] < area_size_[a] &&
        (best < 0 || area_size_[a] < area_size_[best]))
      best = static_cast<int>(a);
  if (best < 0) return "";
  std::snprintf(out, sizeof out, "a remote write into remote-DMA area %d at offset 0x%llx", best,
                static_cast<unsigned long long>(addr - area_base_[best]));
  return out;
}

// ---- Receive ----------------------------------------------------------------------

void Nia::packet_arrived(SrLink& from, SrPacketPtr p) { accept(std::move(p), &from); }

void Nia::accept(SrPacketPtr p, SrLink* in) {
  if (p->kind == SrPacketKind::Ack) {
    ack_arrived(*p, in);
    return;
  }
  stats_.packets_received++;
  const sc_time visible = std::max(sim_time() + config_.rx_process + config_.mem_write_latency, rx_free_);
  rx_free_ = visible;
  // A remote write from another node is acknowledged once its last
  // packet's data is in memory (when its flag's write is issued), whatever
  // the check found.
  if (p->kind == SrPacketKind::Write && p->last && in)
    agenda_.at(visible + config_.packet_setup, [this, p] { send_ack(*p); });
  agenda_.at(visible, [this, p, in] {
    receive(p, in);
    // Written: the packet's place in the input buffer is free again.
    if (in) in->release(in->wire_bytes(*p));
  });
}

void Nia::send_ack(const SrPacket& p) {
  auto a = std::make_shared<SrPacket>();
  a->kind = SrPacketKind::Ack;
  a->src = node_;
  a->dst = p.src;
  a->message = p.message;
  a->route = net_.route(node_, p.src);
  a->born = sim_time();
  stats_.acks_sent++;
  a->route[0]->send(std::move(a));
}

void Nia::ack_arrived(const SrPacket& ack, SrLink* in) {
  stats_.acks_received++;
  if (in) in->release(in->wire_bytes(ack));
  auto it = awaiting_ack_.find(ack.message);
  if (it == awaiting_ack_.end()) return;
  const Kick k = it->second;
  awaiting_ack_.erase(it);
  finish_tcw(k, sim_time(), SR_OK);
}

bool Nia::area_range(uint32_t area, uint64_t offset, uint64_t len, uint64_t* bus) const {
  if (area >= SR_AREAS || area_size_[area] == 0) return false;
  if (offset > area_size_[area] || len > area_size_[area] - offset) return false;
  *bus = area_base_[area] + offset;
  return true;
}

void Nia::receive(const SrPacketPtr& p, SrLink*) {
  const uint64_t len = p->data.size();
  stats_.bytes_received += len;
  uint64_t bus = 0;
  if (p->kind == SrPacketKind::Broadcast) {
    const unsigned c = p->color;
    if (p->first) {
      unsigned err = SR_OK;
      if (!armed_[c])
        err = SR_ERR_BCAST_NOT_ARMED;
      else if (SR_ARM_AREA(arm_[c]) != p->area || SR_ARM_OFFSET(arm_[c]) != p->message_offset)
        err = SR_ERR_BCAST_OFFSET;
      else if (p->message_bytes > arm_size_[c])
        err = SR_ERR_BCAST_SIZE;
      else if (!area_range(p->area, p->message_offset, p->message_bytes, &bus))
        err = SR_ERR_AREA;
      bcast_error_[c] = err;
    }
    if (bcast_error_[c] == SR_OK && len && area_range(p->area, p->offset, len, &bus))
      host_.bus_write(bus, p->data.data(), static_cast<uint32_t>(len));
    if (p->last) {
      stats_.broadcasts_received++;
      if (bcast_error_[c] != SR_OK) stats_.rx_errors++;
      bcast_state_[c] = ((SR_STATE_COUNT(bcast_state_[c]) + 1ull) & SR_STATE_COUNT_MASK) |
                        (static_cast<uint64_t>(bcast_error_[c]) << 32);
      armed_[c] = false;
      notify();
    }
    return;
  }
  // A message with a refused packet writes no flag: the receiver never sees
  // a completion for data that did not land.
  auto key = std::make_pair(p->src, p->message);
  bool bad = rx_bad_.count(key) != 0;
  if (len) {
    if (!bad && area_range(p->area, p->offset, len, &bus)) {
      host_.bus_write(bus, p->data.data(), static_cast<uint32_t>(len));
    } else {
      bad = true;
    }
  }
  if (p->last && p->flag && !bad) {
    if (!area_range(p->flag_area, p->flag_offset, 8, &bus)) {
      bad = true;
    } else if (len) {
      // The flag says the data is in memory: its write is issued once the
      // data's has completed, so it is visible sr8000_mem_write_latency_ns
      // after the data.
      const uint64_t flag = p->flag_value;
      agenda_.after(config_.mem_write_latency, [this, bus, flag] {
        host_.bus_write(bus, reinterpret_cast<const uint8_t*>(&flag), 8);
      });
    } else {
      host_.bus_write(bus, reinterpret_cast<const uint8_t*>(&p->flag_value), 8);  // a flag alone
    }
  }
  if (bad) {
    if (!rx_bad_.count(key)) {
      stats_.rx_errors++;
      error_ = SR_ERR_AREA;
      notify();
    }
    if (!p->last) rx_bad_.insert(key);
  }
  if (p->last) rx_bad_.erase(key);
}

}  // namespace p2
