#include "host/host.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "peach2_hw.h"
#include "core/clock.h"

namespace p2 {

using sc_core::sc_time;
using sc_core::sc_time_stamp;

HostConfig HostConfig::make(const Params& p, const LinkConfig& slot) {
  HostConfig c;
  c.host = {ns(p.host_read_latency_ns), ns(p.host_write_latency_ns), p.host_read_gbps};
  c.gpu = {ns(p.gpu_read_latency_ns), ns(p.gpu_write_latency_ns), p.gpu_read_gbps};
  c.mmio_post = ns(p.mmio_post_latency_ns);
  c.pio_store_bytes = static_cast<uint32_t>(p.pio_store_bytes);
  c.pio_store_gap = ns(p.pio_store_ns);
  c.max_cpl_bytes = std::min(static_cast<uint32_t>(p.host_cpl_bytes), slot.max_payload);
  c.rcb = slot.read_completion_boundary;
  return c;
}

Host::Host(sc_core::sc_module_name name, unsigned node, const HostConfig& config, NodeMemory memory)
    : sc_module(name), node_(node), config_(config) {
  host_mem_.bytes = memory.host;
  host_mem_.size = memory.host_size;
  host_mem_.read_latency = config.host.read_latency;
  host_mem_.write_latency = config.host.write_latency;
  host_mem_.read_bytes_per_ns = config.host.read_bytes_per_ns;
  gpu_mem_.bytes = memory.gpu;
  gpu_mem_.size = memory.gpu_size;
  gpu_mem_.read_latency = config.gpu.read_latency;
  gpu_mem_.write_latency = config.gpu.write_latency;
  gpu_mem_.read_bytes_per_ns = config.gpu.read_bytes_per_ns;

  SC_METHOD(on_writes_due);
  sensitive << writes_due_.event();
  dont_initialize();
  SC_METHOD(on_completions_due);
  sensitive << host_mem_.completions.event() << gpu_mem_.completions.event();
  dont_initialize();
  SC_METHOD(on_stores_due);
  sensitive << stores_due_.event();
  dont_initialize();
}

void Host::attach(LinkPort& port) {
  port_ = &port;
  port.attach(this, 0);
}

Host::Memory* Host::memory_for(uint64_t addr, uint64_t len, uint64_t* offset) {
  if (p2_addr_node(addr) != node_ || len == 0) return nullptr;
  Memory* m = nullptr;
  uint64_t off = p2_addr_offset(addr);
  switch (p2_addr_window(addr)) {
    case P2_WIN_HOST: m = &host_mem_; off -= P2_HOST_OFFSET; break;
    case P2_WIN_GPU: m = &gpu_mem_; off -= P2_GPU_OFFSET; break;
    default: return nullptr;
  }
  if (!m->bytes || off >= m->size || len > m->size - off) return nullptr;
  *offset = off;
  return m;
}

uint8_t* Host::translate(uint64_t addr, uint64_t len) const {
  uint64_t off;
  Memory* m = const_cast<Host*>(this)->memory_for(addr, len, &off);
  return m && !external(m, off, len) ? m->bytes + off : nullptr;
}

bool Host::read(uint64_t addr, uint8_t* out, uint64_t len) const {
  uint64_t off;
  Memory* m = const_cast<Host*>(this)->memory_for(addr, len, &off);
  if (!m) return false;
  if (external(m, off, len)) return external_gpu_->read(off, out, len);
  std::memcpy(out, m->bytes + off, len);
  return true;
}

bool Host::bus_write(uint64_t addr, const uint8_t* data, uint32_t len) {
  uint64_t off;
  Memory* m = memory_for(addr, len, &off);
  if (!m) return false;
  if (external(m, off, len)) {
    if (!external_gpu_->write(off, data, len)) return false;
  } else {
    std::memcpy(m->bytes + off, data, len);
  }
  ++stats_.writes;
  stats_.write_bytes += len;
  if (write_observer_) write_observer_(addr, len);
  return true;
}

void Host::send(TlpPtr tlp) {
  tlp->id = next_id();
  ++stats_.tlps_sent;
  port_->send(std::move(tlp));
}

void Host::issue_from_cpu(sc_time at, TlpPtr tlp) {
  // Uncached stores and loads leave the core in program order and reach the
  // root port mmio_post_latency_ns later.
  sc_time due = at + config_.mmio_post;
  if (!stores_due_.empty()) due = std::max(due, stores_due_.last_due());
  tlp->born = at;
  stores_due_.push(due, std::move(tlp));
}

void Host::mmio_write(uint64_t addr, uint64_t value) {
  auto w = std::make_unique<Tlp>();
  w->kind = TlpKind::MemWrite;
  w->addr = addr;
  w->length = 8;
  w->requester = requester_id(node_, Function::Host);
  w->data.resize(8);
  std::memcpy(w->data.data(), &value, 8);
  issue_from_cpu(std::max(sc_time_stamp(), cpu_store_free_), std::move(w));
}

void Host::mmio_read(uint64_t addr, std::function<void(uint64_t, bool)> done) {
  // Tags are reused round-robin; the CPU never has 256 loads outstanding.
  uint8_t tag = next_tag_++;
  reads_in_flight_[tag] = std::move(done);
  auto r = std::make_unique<Tlp>();
  r->kind = TlpKind::MemRead;
  r->addr = addr;
  r->length = 8;
  r->requester = requester_id(node_, Function::Host);
  r->tag = tag;
  ++stats_.mmio_reads;
  issue_from_cpu(std::max(sc_time_stamp(), cpu_store_free_), std::move(r));
}

void Host::pio_write(uint64_t addr, const uint8_t* data, uint32_t len) {
  const uint32_t store = config_.pio_store_bytes;
  const sc_time gap = config_.pio_store_gap;
  sc_time at = std::max(sc_time_stamp(), cpu_store_free_);
  for (uint32_t done = 0; done < len; done += store) {
    auto w = std::make_unique<Tlp>();
    w->kind = TlpKind::MemWrite;
    w->addr = addr + done;
    w->length = std::min(store, len - done);
    w->requester = requester_id(node_, Function::Host);
    w->data.assign(data + done, data + done + w->length);
    issue_from_cpu(at, std::move(w));
    at += gap;
  }
  cpu_store_free_ = at;
}

void Host::on_stores_due() {
  while (stores_due_.head_due()) {
    ++stats_.cpu_stores;
    send(stores_due_.pop());
  }
}

void Host::tlp_arrived(LinkPort& port, TlpPtr tlp) {
  switch (tlp->kind) {
    case TlpKind::MemWrite: {
      uint64_t off;
      Memory* m = memory_for(tlp->addr, tlp->length, &off);
      if (!m) {
        // Outside registered memory: the root complex drops it, never applies it.
        ++stats_.dropped_writes;
        port.release(*tlp);
        return;
      }
      // Posted writes stay in order: none becomes visible before an older one.
      sc_time visible = sc_time_stamp() + m->write_latency;
      if (!writes_due_.empty()) visible = std::max(visible, writes_due_.last_due());
      writes_due_.push(visible, std::move(tlp));
      return;
    }
    case TlpKind::MemRead:
      port.release(*tlp);  // the root complex queues requests internally
      serve_read(std::move(tlp));
      return;
    case TlpKind::Completion: {
      port.release(*tlp);
      auto it = reads_in_flight_.find(tlp->tag);
      if (it == reads_in_flight_.end()) return;
      auto done = std::move(it->second);
      reads_in_flight_.erase(it);
      uint64_t value = 0;
      bool ok = tlp->status == CplStatus::Success && tlp->length == 8;
      if (ok) std::memcpy(&value, tlp->data.data(), 8);
      done(value, ok);
      return;
    }
  }
}

void Host::on_writes_due() {
  while (writes_due_.head_due()) {
    TlpPtr w = writes_due_.pop();
    uint64_t off;
    Memory* m = memory_for(w->addr, w->length, &off);
    if (external(m, off, w->length)) {
      // A device that refuses the write has reported it; the bytes are lost
      // as a root complex loses a write it cannot apply.
      if (!external_gpu_->write(off, w->data.data(), w->length)) ++stats_.dropped_writes;
    } else
      std::memcpy(m->bytes + off, w->data.data(), w->length);
    ++stats_.writes;
    stats_.write_bytes += w->length;
    sc_time latency = sc_time_stamp() - w->born;
    stats_.write_latency_total += latency;
    stats_.write_latency_max = std::max(stats_.write_latency_max, latency);
    port_->release(*w);
    if (write_observer_) write_observer_(w->addr, w->length);
  }
}

void Host::serve_read(TlpPtr req) {
  uint64_t off;
  Memory* m = memory_for(req->addr, req->length, &off);
  Memory& engine = m ? *m : host_mem_;
  sc_time start = std::max(sc_time_stamp() + engine.read_latency, engine.read_free);
  // A read never passes a posted write that arrived before it.
  if (!writes_due_.empty()) start = std::max(start, writes_due_.last_due());
  // External GPU memory is fetched once per request, the same bytes the
  // completions would have carried from the arena; a device that refuses the
  // read aborts it (the DMA fails) rather than returning wrong bytes.
  std::vector<uint8_t> fetched;
  const bool ext = m && external(m, off, req->length);
  if (ext) {
    fetched.resize(req->length);
    if (!external_gpu_->read(off, fetched.data(), req->length)) {
      TlpPtr cpl = make_completion(*req, CplStatus::CompleterAbort);
      ++stats_.unsupported_reads;
      engine.completions.push(std::max(start, engine.completions.empty()
                                                  ? start
                                                  : engine.completions.last_due()),
                              std::move(cpl));
      return;
    }
  }
  if (!m) {
    TlpPtr cpl = make_completion(*req, CplStatus::UnsupportedRequest);
    ++stats_.unsupported_reads;
    engine.completions.push(std::max(start, engine.completions.empty()
                                                ? start
                                                : engine.completions.last_due()),
                            std::move(cpl));
    return;
  }
  ++stats_.reads;
  stats_.read_bytes += req->length;
  const uint32_t max_cpl = config_.max_cpl_bytes;
  uint32_t remaining = req->length;
  sc_time ready = start;
  const uint8_t* bytes = ext ? fetched.data() : m->bytes + off;
  for (const Span& s : split_completions(req->addr, req->length, max_cpl,
                                         config_.rcb)) {
    const uint8_t* src = bytes + (s.addr - req->addr);
    TlpPtr cpl = make_completion(*req, s.addr, src, s.length, remaining);
    remaining -= s.length;
    ready += ns(s.length / engine.read_bytes_per_ns);
    engine.completions.push(ready, std::move(cpl));
  }
  engine.read_free = ready;
}

void Host::on_completions_due() {
  for (Memory* m : {&host_mem_, &gpu_mem_})
    while (m->completions.head_due()) send(m->completions.pop());
}

}  // namespace p2
