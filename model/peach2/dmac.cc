#include "peach2/dmac.h"

#include <algorithm>
#include <cstring>

namespace p2 {

using sc_core::sc_time;

namespace {

// Whether [addr, addr+len) lies in one host or GPU window of one node.
bool in_memory_window(uint64_t addr, uint64_t len, unsigned* node) {
  p2_window w = p2_addr_window(addr);
  if (w != P2_WIN_HOST && w != P2_WIN_GPU) return false;
  uint64_t last = addr + len - 1;
  if (last < addr || p2_addr_window(last) != w || p2_addr_node(last) != p2_addr_node(addr))
    return false;
  *node = p2_addr_node(addr);
  return true;
}

}  // namespace

Dmac::Dmac(sc_core::sc_module_name name, unsigned node, unsigned nnodes, const ChipConfig& config,
           Router& router, Registers& regs)
    : sc_module(name),
      node_(node),
      nnodes_(nnodes),
      config_(config.dmac),
      clock_(config.chip_mhz),
      router_(router),
      regs_(regs),
      tags_(config.dmac.max_reads) {
  run_wake_.bind([this] { run(); });
  decoding_.on_due([this] { on_decoded(); });
  router_.on_forward(Xbar::Dmac, [this](const Tlp&) {
    int tag = in_crossbar_.front();
    in_crossbar_.pop_front();
    if (tag >= 0 && --tags_[tag].writes_pending == 0) free_tag(tag);
  });
}

uint64_t Dmac::read_reg(unsigned c, uint64_t reg) const {
  const Channel& ch = channels_[c];
  switch (reg) {
    case P2_DMA_DESC_PTR: return ch.desc_ptr;
    case P2_DMA_STATUS: return ch.status;
    case P2_DMA_ERROR: return ch.error;
    case P2_DMA_REG_COUNT: return ch.reg_count;
    case P2_DMA_DONE: return ch.done;
    case P2_DMA_RUNS: return ch.runs;
    case P2_DMA_END_WB: return ch.end_wb;
    default: return 0;
  }
}

void Dmac::write_reg(unsigned c, uint64_t reg, uint64_t value) {
  Channel& ch = channels_[c];
  switch (reg) {
    case P2_DMA_DESC_PTR: ch.desc_ptr = value; break;
    case P2_DMA_REG_COUNT: ch.reg_count = value; break;
    case P2_DMA_START: start(c, value); break;
    case P2_DMA_END_WB: ch.end_wb = value; break;
    default: break;  // read-only or unassigned
  }
}

uint64_t Dmac::desc_word(unsigned c, unsigned slot, unsigned word) const {
  uint64_t v;
  std::memcpy(&v, reinterpret_cast<const uint8_t*>(&channels_[c].slots[slot]) + 8 * word, 8);
  return v;
}

void Dmac::set_desc_word(unsigned c, unsigned slot, unsigned word, uint64_t value) {
  std::memcpy(reinterpret_cast<uint8_t*>(&channels_[c].slots[slot]) + 8 * word, &value, 8);
}

void Dmac::start(unsigned c, uint64_t command) {
  Channel& ch = channels_[c];
  if (ch.status == P2_DMA_BUSY) {
    ++stats_.ignored_starts;
    ch.error = P2_ERR_BUSY;
    return;
  }
  ch.error = P2_OK;
  ch.done = 0;
  ch.status = P2_DMA_BUSY;
  ch.issued = ch.written = 0;
  ch.reads.clear();
  ch.draining.clear();
  ch.prefetch = Channel::Prefetch{};
  ch.run_tag = P2_DMA_START_TAG(command);
  command = P2_DMA_START_COMMAND(command);
  if (command == P2_DMA_START_REGISTERS) {
    ch.register_mode = true;
    ch.next_slot = 0;
    if (ch.reg_count < 1 || ch.reg_count > P2_DESC_REG_SLOTS) {
      fail(c, P2_ERR_REG_COUNT);
      return;
    }
  } else if (command == P2_DMA_START_CHAIN) {
    ch.register_mode = false;
    ch.next_desc = ch.desc_ptr;
  } else {
    fail(c, P2_ERR_BAD_DESC);
    return;
  }
  regs_.notify_changed();
  begin_descriptor(c);
}

void Dmac::begin_descriptor(unsigned c) {
  Channel& ch = channels_[c];
  ch.started = sim_time();
  ++ch.serial;
  ch.tags = 0;
  if (ch.register_mode) {
    ch.desc = ch.slots[ch.next_slot++];
    ch.phase = Phase::Decode;
    decoding_.push(clock_.edge_at_or_after(sim_time()) +
                       clock_.cycles(config_.reg_desc_cycles + config_.desc_cycles),
                   c);
    return;
  }
  unsigned node;
  if (ch.next_desc % 8 != 0 || !in_memory_window(ch.next_desc, P2_DESC_SIZE, &node) ||
      node != node_ || p2_addr_window(ch.next_desc) != P2_WIN_HOST) {
    fail(c, P2_ERR_DESC_FETCH);
    return;
  }
  Channel::Prefetch& pf = ch.prefetch;
  if (pf.addr == ch.next_desc && pf.addr != 0) {
    pf.addr = 0;
    if (pf.ready) {
      descriptor_arrived(c, pf.desc);
      return;
    }
    // Its fetch is out: wait for it as for our own.
    ch.phase = Phase::Fetch;
    ch.fetch_issued = true;
    pf.awaited = true;
    return;
  }
  ch.phase = Phase::Fetch;
  ch.fetch_issued = false;
  kick();
}

void Dmac::descriptor_arrived(unsigned c, const p2_desc& d) {
  Channel& ch = channels_[c];
  ch.desc = d;
  ch.next_desc = d.next;
  ch.phase = Phase::Decode;
  decoding_.push(clock_.edge_at_or_after(sim_time()) + clock_.cycles(config_.desc_cycles), c);
  if ((d.flags & P2_DESC_PIPELINE) && d.next != 0) {
    ch.prefetch = Channel::Prefetch{};
    ch.prefetch.addr = d.next;
    issue_prefetch(c);
  }
}

void Dmac::issue_prefetch(unsigned c) {
  Channel& ch = channels_[c];
  Channel::Prefetch& pf = ch.prefetch;
  if (pf.addr == 0 || pf.issued) return;
  unsigned node;
  if (pf.addr % 8 != 0 || !in_memory_window(pf.addr, P2_DESC_SIZE, &node) || node != node_ ||
      p2_addr_window(pf.addr) != P2_WIN_HOST) {
    pf.addr = 0;  // fetched (and refused) in its turn
    return;
  }
  int tag = issue_read(c, Purpose::Prefetch, pf.addr, P2_DESC_SIZE, 0);
  if (tag < 0) return;  // no tag free: run() tries again
  // The prefetch belongs to no descriptor: it must not hold this one back.
  tags_[tag].owner = 0;
  --ch.tags;
  pf.issued = true;
  ++stats_.descriptor_fetches;
}

void Dmac::on_decoded() {
  // Equal decode times come out in push order; each decodes independently.
  std::vector<unsigned> ready;
  while (decoding_.head_due()) ready.push_back(decoding_.pop());
  for (unsigned c : ready) decode(c);
}

p2_error Dmac::validate(const p2_desc& d) const {
  if ((d.flags & ~P2_DESC_FLAGS_ALL) || d.length == 0) return P2_ERR_BAD_DESC;
  uint32_t blocks = (d.flags & P2_DESC_BLOCK_STRIDE) ? d.block_count : 1;
  if (blocks == 0) return P2_ERR_BAD_DESC;
  if ((d.flags & (P2_DESC_NOTIFY | P2_DESC_NOTIFY_SELF)) &&
      (d.wait_slot >= P2_NOTIFY_SLOTS || d.wait_tag > P2_NOTIFY_TAG_MAX))
    return P2_ERR_BAD_NOTIFY;
  // The first and the last block bound the whole transfer (strides are
  // unsigned, so blocks only move upwards; a stride that wraps the address
  // space bounds nothing and is refused).
  unsigned src_node, src_last_node, dst_node, dst_last_node;
  uint64_t src_span, dst_span, src_last, dst_last;
  if (__builtin_mul_overflow(static_cast<uint64_t>(blocks - 1), d.src_stride, &src_span) ||
      __builtin_add_overflow(d.src, src_span, &src_last))
    return P2_ERR_SRC_UNMAPPED;
  if (__builtin_mul_overflow(static_cast<uint64_t>(blocks - 1), d.dst_stride, &dst_span) ||
      __builtin_add_overflow(d.dst, dst_span, &dst_last))
    return P2_ERR_DST_UNMAPPED;
  if (!in_memory_window(d.src, d.length, &src_node) ||
      !in_memory_window(src_last, d.length, &src_last_node) ||
      p2_addr_window(d.src) != p2_addr_window(src_last) || src_node != src_last_node)
    return P2_ERR_SRC_UNMAPPED;
  if (src_node != node_) return P2_ERR_SRC_REMOTE;
  if (!in_memory_window(d.dst, d.length, &dst_node) ||
      !in_memory_window(dst_last, d.length, &dst_last_node) ||
      p2_addr_window(d.dst) != p2_addr_window(dst_last) || dst_node != dst_last_node ||
      dst_node >= nnodes_)
    return P2_ERR_DST_UNMAPPED;
  // No cable path to that node (another PEACH2 network): its writes would be
  // dropped on this board, so the descriptor fails before any byte moves.
  if (dst_node != node_ && router_.route(dst_node) == P2_ROUTE_NONE) return P2_ERR_DST_UNREACHABLE;
  // Posted writes get no answer: a write past the memory the target exposes
  // would vanish there while the run "succeeds". The DMAC knows the exposed
  // size (the same on every node) and refuses the descriptor instead.
  const bool gpu = p2_addr_window(d.dst) == P2_WIN_GPU;
  const uint64_t base = gpu ? P2_GPU_OFFSET : P2_HOST_OFFSET;
  const uint64_t exposed = gpu ? config_.gpu_exposed_bytes : config_.host_exposed_bytes;
  const uint64_t last_off = p2_addr_offset(dst_last) - base;
  if (last_off >= exposed || d.length > exposed - last_off) return P2_ERR_DST_RANGE;
  return P2_OK;
}

void Dmac::decode(unsigned c) {
  Channel& ch = channels_[c];
  if (ch.status != P2_DMA_BUSY || ch.phase != Phase::Decode) return;
  p2_error e = validate(ch.desc);
  if (e != P2_OK) {
    fail(c, e);
    return;
  }
  ch.blocks = (ch.desc.flags & P2_DESC_BLOCK_STRIDE) ? ch.desc.block_count : 1;
  ch.block = 0;
  ch.block_offset = 0;
  ch.phase = Phase::Transfer;
  // validate() has placed the source on this node.
  if (traffic_ && p2_addr_node(ch.desc.dst) != node_)
    traffic_->on_transfer(node_, p2_addr_node(ch.desc.dst), uint64_t{ch.desc.length} * ch.blocks, "peach2",
                          p2_addr_window(ch.desc.src) == P2_WIN_GPU ? "gpu" : "host",
                          p2_addr_window(ch.desc.dst) == P2_WIN_GPU ? "gpu" : "host");
  kick();
}

int Dmac::issue_read(unsigned c, Purpose purpose, uint64_t src, uint32_t len, uint64_t dst) {
  auto it = std::find_if(tags_.begin(), tags_.end(), [](const Tag& t) { return !t.busy; });
  if (it == tags_.end()) return -1;
  int tag = static_cast<int>(it - tags_.begin());
  Tag& t = *it;
  t = Tag{};
  t.busy = true;
  t.channel = static_cast<int>(c);
  t.owner = channels_[c].serial;
  t.purpose = purpose;
  t.dst = dst;
  t.length = len;
  t.data.resize(len);
  ++channels_[c].tags;

  auto req = std::make_unique<Tlp>();
  req->kind = TlpKind::MemRead;
  req->addr = src;
  req->length = len;
  req->requester = requester_id(node_, Function::Dmac);
  req->tag = static_cast<uint8_t>(tag);
  req->born = sim_time();
  send(std::move(req), -1);
  return tag;
}

void Dmac::send(TlpPtr tlp, int tag) {
  tlp->id = (static_cast<uint64_t>(node_) << 48) | (1ull << 44) | next_tlp_id_++;
  in_crossbar_.push_back(tag);
  router_.inject(Xbar::Dmac, std::move(tlp));
}

void Dmac::kick() {
  sc_time now = sim_time();
  run_wake_.notify(clock_.edge_at_or_after(now) - now);
}

void Dmac::run() {
  // Channels take turns for the shared read tags.
  for (unsigned k = 0; k < P2_DMA_CHANNELS; ++k) {
    unsigned c = (next_channel_ + k) % P2_DMA_CHANNELS;
    Channel& ch = channels_[c];
    if (ch.status != P2_DMA_BUSY) continue;
    // Descriptors that let the next one start complete, in order, once their
    // last write has entered the crossbar.
    while (!ch.draining.empty() && ch.draining.front().tags == 0) {
      Channel::Draining done = ch.draining.front();
      ch.draining.pop_front();
      complete(c, done.desc, done.started);
    }
    issue_prefetch(c);
    if (ch.phase == Phase::Fetch && !ch.fetch_issued) {
      if (issue_read(c, Purpose::Descriptor, ch.next_desc, P2_DESC_SIZE, 0) >= 0) {
        ch.fetch_issued = true;
        ++stats_.descriptor_fetches;
      }
      continue;
    }
    if (ch.phase != Phase::Transfer) continue;
    const p2_desc& d = ch.desc;
    while (ch.block < ch.blocks) {
      uint64_t src = d.src + ch.block * d.src_stride + ch.block_offset;
      uint64_t dst = d.dst + ch.block * d.dst_stride + ch.block_offset;
      uint64_t len = std::min<uint64_t>({d.length - ch.block_offset,
                                         static_cast<uint64_t>(config_.max_read_request),
                                         bytes_to_request_boundary(src)});
      int tag = issue_read(c, Purpose::Data, src, static_cast<uint32_t>(len), dst);
      if (tag < 0) break;
      ch.reads[ch.issued++] = tag;
      ch.block_offset += len;
      if (ch.block_offset == d.length) {
        ++ch.block;
        ch.block_offset = 0;
      }
    }
    if (ch.block < ch.blocks) continue;
    if (ch.tags == 0 && ch.draining.empty()) {
      finish_descriptor(c);
    } else if ((d.flags & P2_DESC_PIPELINE) && more_descriptors(ch)) {
      ch.draining.push_back({ch.serial, d, ch.started, ch.tags});
      begin_descriptor(c);
    }
  }
  next_channel_ = (next_channel_ + 1) % P2_DMA_CHANNELS;
}

void Dmac::accept(TlpPtr cpl) {
  Tag& t = tags_[cpl->tag];
  if (!t.busy) return;  // a stray completion: nothing asked for it
  unsigned c = static_cast<unsigned>(t.channel);
  if (cpl->status != CplStatus::Success) {
    if (!t.orphan)
      fail(c, t.purpose != Purpose::Data ? P2_ERR_DESC_FETCH
              : cpl->status == CplStatus::CompleterAbort ? P2_ERR_COMPLETER_ABORT
                                                         : P2_ERR_UNSUPPORTED);
    free_tag(cpl->tag);
    return;
  }
  std::memcpy(t.data.data() + t.received, cpl->data.data(), cpl->length);
  t.received += cpl->length;
  if (t.received < t.length) return;
  if (t.orphan) {
    free_tag(cpl->tag);
    return;
  }
  Channel& ch = channels_[c];
  if (t.purpose != Purpose::Data) {
    p2_desc d;
    std::memcpy(&d, t.data.data(), P2_DESC_SIZE);
    bool early = t.purpose == Purpose::Prefetch && !ch.prefetch.awaited;
    free_tag(cpl->tag);
    if (early) {
      ch.prefetch.desc = d;
      ch.prefetch.ready = true;
      return;
    }
    ch.prefetch.awaited = false;
    descriptor_arrived(c, d);
    return;
  }
  emit_writes(c);
}

void Dmac::emit_writes(unsigned c) {
  Channel& ch = channels_[c];
  // Data leaves in the order it was read, whatever order reads complete in.
  for (auto it = ch.reads.find(ch.written); it != ch.reads.end(); it = ch.reads.find(ch.written)) {
    int tag = it->second;
    Tag& t = tags_[tag];
    if (t.received < t.length) break;
    ch.reads.erase(it);
    ++ch.written;
    std::vector<Span> spans = split_write(t.dst, t.length, config_.max_payload_to[p2_addr_node(t.dst)]);
    t.writes_pending = static_cast<unsigned>(spans.size());
    uint32_t offset = 0;
    for (const Span& s : spans) {
      auto w = std::make_unique<Tlp>();
      w->kind = TlpKind::MemWrite;
      w->addr = s.addr;
      w->length = s.length;
      w->requester = requester_id(node_, Function::Dmac);
      w->data.assign(t.data.data() + offset, t.data.data() + offset + s.length);
      w->born = ch.started;
      offset += s.length;
      send(std::move(w), tag);
    }
    stats_.bytes += t.length;
  }
}

void Dmac::free_tag(int tag) {
  Tag& t = tags_[tag];
  t.busy = false;
  t.data.clear();
  t.data.shrink_to_fit();
  if (t.channel >= 0) {
    // The tag counts against the descriptor that issued it (none when it is
    // an orphan of a run that failed or was restarted).
    Channel& ch = channels_[t.channel];
    if (t.owner == ch.serial && ch.tags > 0) --ch.tags;
    for (Channel::Draining& dr : ch.draining)
      if (dr.serial == t.owner && dr.tags > 0) --dr.tags;
  }
  t.channel = -1;
  kick();
}

bool Dmac::more_descriptors(const Channel& ch) const {
  return ch.register_mode ? ch.next_slot < ch.reg_count : ch.next_desc != 0;
}

void Dmac::complete(unsigned c, const p2_desc& d, sc_time started) {
  Channel& ch = channels_[c];
  auto notify = [&](unsigned node) {
    auto w = std::make_unique<Tlp>();
    w->kind = TlpKind::MemWrite;
    w->addr = p2_node_base(node) + P2_REGS_OFFSET + P2_REG_NOTIFY_RAISE;
    w->length = 8;
    w->requester = requester_id(node_, Function::Dmac);
    uint64_t word = p2_notify_word(d.wait_slot, d.wait_tag, node_);
    w->data.resize(8);
    std::memcpy(w->data.data(), &word, 8);
    w->born = started;
    send(std::move(w), -1);
  };
  if (d.flags & P2_DESC_NOTIFY) notify(p2_addr_node(d.dst));
  if (d.flags & P2_DESC_NOTIFY_SELF) notify(node_);

  sc_time latency = sim_time() - started;
  if (stats_.descriptors == 0 || latency < stats_.latency_min) stats_.latency_min = latency;
  if (latency > stats_.latency_max) stats_.latency_max = latency;
  stats_.latency_total += latency;
  ++stats_.descriptors;
  ++ch.done;
}

void Dmac::finish_descriptor(unsigned c) {
  Channel& ch = channels_[c];
  complete(c, ch.desc, ch.started);
  if (more_descriptors(ch)) {
    begin_descriptor(c);
    return;
  }
  ch.phase = Phase::Idle;
  ch.status = P2_DMA_IDLE;
  ++ch.runs;
  ++stats_.runs;
  write_back_end(c);
  regs_.notify_changed();
}

void Dmac::write_back_end(unsigned c) {
  Channel& ch = channels_[c];
  if (ch.end_wb == 0) return;
  auto w = std::make_unique<Tlp>();
  w->kind = TlpKind::MemWrite;
  w->addr = ch.end_wb;
  w->length = 8;
  w->requester = requester_id(node_, Function::Dmac);
  w->data.resize(8);
  std::memcpy(w->data.data(), &ch.run_tag, 8);
  w->born = sim_time();
  send(std::move(w), -1);
}

void Dmac::fail(unsigned c, p2_error e) {
  Channel& ch = channels_[c];
  ch.status = P2_DMA_FAILED;
  ch.error = e;
  ch.phase = Phase::Idle;
  ch.reads.clear();
  ch.draining.clear();
  ch.prefetch = Channel::Prefetch{};
  ++stats_.errors;
  write_back_end(c);
  // Reads still in flight are drained when their completions come back; data
  // already read but not yet written is dropped now.
  for (size_t i = 0; i < tags_.size(); ++i) {
    Tag& t = tags_[i];
    if (!t.busy || t.channel != static_cast<int>(c) || t.writes_pending > 0) continue;
    if (t.received == t.length)
      free_tag(static_cast<int>(i));
    else
      t.orphan = true;
  }
  regs_.notify_changed();
}

}  // namespace p2
