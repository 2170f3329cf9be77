#include "peach2/registers.h"

#include <cstring>

#include "peach2/dmac.h"
#include "peach2_hw.h"

namespace p2 {

Registers::Registers(sc_core::sc_module_name name, unsigned node, unsigned nnodes,
                     const ChipConfig& config, Router& router)
    : sc_module(name),
      node_(node),
      nnodes_(nnodes),
      config_(config.registers),
      clock_(config.chip_mhz),
      router_(router) {
  accesses_.on_due([this] { on_access_due(); });
}

uint64_t Registers::read(uint64_t off) const {
  switch (off) {
    case P2_REG_CHIP_ID: return P2_CHIP_ID_VALUE;
    case P2_REG_NODE_ID: return node_;
    case P2_REG_NUM_NODES: return nnodes_;
    case P2_REG_CYCLES: return clock_.cycle_count(sim_time());
    case P2_REG_PORT_MODE: return port_modes_;
    case P2_REG_NOTIFY_RING: return ring_base_;
    case P2_REG_NOTIFY_RING_SIZE: return ring_size_;
    case P2_REG_NOTIFY_HEAD: return ring_head_;
    case P2_REG_NOTIFY_TAIL: return ring_tail_;
    case P2_REG_NOTIFY_OVERFLOW: return ring_overflow_;
    case P2_REG_NOTIFY_TABLE_ON: return table_on_;
    case P2_REG_NOTIFY_POP:
    case P2_REG_NOTIFY_PEEK: return table_.empty() ? (ring_head_ & 0xffffffffu) : table_.front();
    default: break;
  }
  if (off >= P2_REG_ROUTE_BASE && off < P2_REG_ROUTE(P2_MAX_NODES))
    return router_.route(static_cast<unsigned>((off - P2_REG_ROUTE_BASE) / 8));
  if (dmac_ && off >= P2_REG_DMA_BASE && off < P2_REG_DMA(P2_DMA_CHANNELS, 0))
    return dmac_->read_reg(static_cast<unsigned>((off - P2_REG_DMA_BASE) / P2_REG_DMA_STRIDE),
                           (off - P2_REG_DMA_BASE) % P2_REG_DMA_STRIDE);
  if (dmac_ && off >= P2_REG_DESC_BASE && off < P2_REG_DESC(P2_DMA_CHANNELS, 0)) {
    uint64_t rel = off - P2_REG_DESC_BASE;
    return dmac_->desc_word(static_cast<unsigned>(rel / (P2_DESC_REG_SLOTS * P2_DESC_SIZE)),
                            static_cast<unsigned>(rel / P2_DESC_SIZE % P2_DESC_REG_SLOTS),
                            static_cast<unsigned>(rel % P2_DESC_SIZE / 8));
  }
  return 0;
}

void Registers::write(uint64_t off, uint64_t value) {
  switch (off) {
    case P2_REG_NOTIFY_RAISE: append_notification(value); return;
    case P2_REG_NOTIFY_RING:
      ring_base_ = value;
      ring_head_ = ring_tail_ = 0;
      return;
    case P2_REG_NOTIFY_RING_SIZE:
      // Only a power of two can be indexed by masking, as the hardware does.
      ring_size_ = (value != 0 && (value & (value - 1)) == 0) ? value : 0;
      return;
    case P2_REG_NOTIFY_TAIL:
      if (value <= ring_head_) ring_tail_ = value;
      return;
    case P2_REG_NOTIFY_TABLE_ON:
      table_on_ = value & 1;
      table_.clear();
      return;
    default: break;
  }
  if (off >= P2_REG_ROUTE_BASE && off < P2_REG_ROUTE(P2_MAX_NODES)) {
    if (value < P2_PORT_COUNT)
      router_.set_route(static_cast<unsigned>((off - P2_REG_ROUTE_BASE) / 8),
                        static_cast<p2_port>(value));
    return;
  }
  if (dmac_ && off >= P2_REG_DMA_BASE && off < P2_REG_DMA(P2_DMA_CHANNELS, 0)) {
    dmac_->write_reg(static_cast<unsigned>((off - P2_REG_DMA_BASE) / P2_REG_DMA_STRIDE),
                     (off - P2_REG_DMA_BASE) % P2_REG_DMA_STRIDE, value);
    return;
  }
  if (dmac_ && off >= P2_REG_DESC_BASE && off < P2_REG_DESC(P2_DMA_CHANNELS, 0)) {
    uint64_t rel = off - P2_REG_DESC_BASE;
    dmac_->set_desc_word(static_cast<unsigned>(rel / (P2_DESC_REG_SLOTS * P2_DESC_SIZE)),
                         static_cast<unsigned>(rel / P2_DESC_SIZE % P2_DESC_REG_SLOTS),
                         static_cast<unsigned>(rel % P2_DESC_SIZE / 8), value);
  }
}

void Registers::append_notification(uint64_t word) {
  if (table_on_ && table_.size() < config_.notify_table_entries) {
    table_.push_back(p2_notify_entry(p2_notify_serial(table_serial_++), p2_notify_word_slot(word),
                                     p2_notify_word_tag(word), p2_notify_word_node(word)));
    return;
  }
  if (ring_base_ == 0 || ring_size_ == 0 || ring_head_ - ring_tail_ >= ring_size_) {
    ++ring_overflow_;
    return;
  }
  uint64_t entry = p2_notify_entry(p2_notify_serial(ring_head_), p2_notify_word_slot(word),
                                   p2_notify_word_tag(word), p2_notify_word_node(word));
  auto w = std::make_unique<Tlp>();
  w->kind = TlpKind::MemWrite;
  w->addr = ring_base_ + 8 * (ring_head_ % ring_size_);
  w->length = 8;
  w->requester = requester_id(node_, Function::Chip);
  w->data.resize(8);
  std::memcpy(w->data.data(), &entry, 8);
  w->born = sim_time();
  w->id = (static_cast<uint64_t>(node_) << 48) | (2ull << 44) | ring_head_;
  ++ring_head_;
  router_.inject(Xbar::Regs, std::move(w));
}

void Registers::accept(TlpPtr tlp) {
  accesses_.push(sim_time() +
                     clock_.cycles(config_.access_cycles),
                 std::move(tlp));
}

void Registers::on_access_due() {
  while (accesses_.head_due()) {
    TlpPtr tlp = accesses_.pop();
    uint64_t off = p2_bar_offset(tlp->addr, P2_WIN_REGS);
    bool well_formed = tlp->length == 8 && off % 8 == 0;
    if (tlp->kind == TlpKind::MemWrite) {
      if (!well_formed) {
        ++bad_accesses_;
        continue;
      }
      uint64_t value;
      std::memcpy(&value, tlp->data.data(), 8);
      write(off, value);
      continue;
    }
    if (tlp->kind != TlpKind::MemRead) continue;  // a completion cannot address BAR0
    TlpPtr cpl;
    if (well_formed) {
      uint64_t value = off == P2_REG_NOTIFY_POP ? pop_table() : read(off);
      uint8_t bytes[8];
      std::memcpy(bytes, &value, 8);
      cpl = make_completion(*tlp, tlp->addr, bytes, 8, 8);
    } else {
      ++bad_accesses_;
      cpl = make_completion(*tlp, CplStatus::UnsupportedRequest);
    }
    router_.inject(Xbar::Regs, std::move(cpl));
  }
}

uint64_t Registers::pop_table() {
  uint64_t value = read(P2_REG_NOTIFY_POP);
  if (!table_.empty()) table_.pop_front();
  return value;
}

}  // namespace p2
