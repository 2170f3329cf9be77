#include "host/host.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "peach2_hw.h"
#include "core/clock.h"

namespace p2 {

using sc_core::sc_time;

HostConfig HostConfig::make(const Params& p, const LinkConfig& slot) {
  HostConfig c;
  c.host = {ns(p.host_read_latency_ns), ns(p.host_write_latency_ns), p.host_read_gbps, 0, sc_core::SC_ZERO_TIME};  // DDIO: no drain
  c.gpu = {ns(p.gpu_read_latency_ns), ns(p.gpu_write_latency_ns), p.gpu_read_gbps, p.gpu_write_gbps,
           ns(p.gpu_read_flush_ns)};
  c.mmio_post = ns(p.mmio_post_latency_ns);
  c.load_return = ns(p.mmio_load_return_ns);
  c.pio_store_bytes = static_cast<uint32_t>(p.pio_store_bytes);
  c.pio_store_gap = ns(p.pio_store_ns);
  c.max_cpl_bytes = std::min(static_cast<uint32_t>(p.host_cpl_bytes), slot.max_payload);
  c.rcb = slot.read_completion_boundary;
  return c;
}

Host::Host(sc_core::sc_module_name name, unsigned node, const HostConfig& config, NodeMemory memory)
    : sc_module(name), node_(node), config_(config), memory_(memory) {
  for (RootPort& rp : ports_) {
    rp.writes_due.on_due([this] { on_writes_due(); });
    rp.host_mem.completions.on_due([this] { on_completions_due(); });
    rp.gpu_mem.completions.on_due([this] { on_completions_due(); });
  }
  stores_due_.on_due([this] { on_stores_due(); });
  loads_due_.on_due([this] { on_loads_due(); });
}

void Host::attach(LinkPort& port) { attach(port, PortConfig()); }

void Host::attach(LinkPort& port, const PortConfig& pc) {
  if (nports_ == kMaxRootPorts) throw std::logic_error("host: too many root ports");
  RootPort& rp = ports_[nports_++];
  rp.link = &port;
  rp.cpu_windows = pc.cpu_windows;
  const LinkConfig& lc = port.link().config();
  rp.max_cpl = std::min(pc.max_cpl_bytes ? pc.max_cpl_bytes : config_.max_cpl_bytes, lc.max_payload);
  rp.rcb = pc.max_cpl_bytes ? lc.read_completion_boundary : config_.rcb;
  auto setup = [](Memory& m, uint8_t* bytes, uint64_t size, const HostConfig::MemoryTiming& t) {
    m.bytes = bytes;
    m.size = size;
    m.read_latency = t.read_latency;
    m.write_latency = t.write_latency;
    m.read_bytes_per_ns = t.read_bytes_per_ns;
    m.write_bytes_per_ns = t.write_bytes_per_ns;
    m.read_flush = t.read_flush;
  };
  setup(rp.host_mem, memory_.host, memory_.host_size, pc.host ? *pc.host : config_.host);
  setup(rp.gpu_mem, memory_.gpu, memory_.gpu_size, pc.gpu ? *pc.gpu : config_.gpu);
  for (Memory* m : {&rp.host_mem, &rp.gpu_mem})
    if (m->read_bytes_per_ns > 0)
      for (uint32_t b = 0; b <= rp.max_cpl; ++b)
        m->read_time_of.push_back(ns(b / m->read_bytes_per_ns));
  port.attach(this, 0);
}

Host::RootPort& Host::port_of(const LinkPort& link) {
  for (unsigned i = 0; i < nports_; ++i)
    if (ports_[i].link == &link) return ports_[i];
  throw std::logic_error("host: TLP from a port not attached");
}

unsigned Host::port_for_cpu(uint64_t addr) const {
  uint64_t off = p2_addr_offset(addr);
  for (unsigned i = 0; i < nports_; ++i)
    for (const auto& [lo, size] : ports_[i].cpu_windows)
      if (off >= lo && off - lo < size) return i;
  return 0;
}

Host::Memory* Host::memory_for(RootPort& rp, uint64_t addr, uint64_t len, uint64_t* offset) {
  if (p2_addr_node(addr) != node_ || len == 0) return nullptr;
  Memory* m = nullptr;
  uint64_t off = p2_addr_offset(addr);
  switch (p2_addr_window(addr)) {
    case P2_WIN_HOST: m = &rp.host_mem; off -= P2_HOST_OFFSET; break;
    case P2_WIN_GPU: m = &rp.gpu_mem; off -= P2_GPU_OFFSET; break;
    default: return nullptr;
  }
  if (!m->bytes || off >= m->size || len > m->size - off) return nullptr;
  *offset = off;
  return m;
}

uint8_t* Host::locate(uint64_t addr, uint64_t len, bool* gpu, uint64_t* offset) const {
  if (p2_addr_node(addr) != node_ || len == 0) return nullptr;
  uint64_t off = p2_addr_offset(addr);
  uint8_t* bytes = nullptr;
  uint64_t size = 0;
  switch (p2_addr_window(addr)) {
    case P2_WIN_HOST: bytes = memory_.host; size = memory_.host_size; off -= P2_HOST_OFFSET; break;
    case P2_WIN_GPU: bytes = memory_.gpu; size = memory_.gpu_size; off -= P2_GPU_OFFSET; break;
    default: return nullptr;
  }
  if (!bytes || off >= size || len > size - off) return nullptr;
  *gpu = p2_addr_window(addr) == P2_WIN_GPU;
  *offset = off;
  return bytes + off;
}

uint8_t* Host::translate(uint64_t addr, uint64_t len) const {
  bool gpu;
  uint64_t off;
  uint8_t* p = locate(addr, len, &gpu, &off);
  return p && !external(gpu, off, len) ? p : nullptr;
}

bool Host::read(uint64_t addr, uint8_t* out, uint64_t len) const {
  bool gpu;
  uint64_t off;
  uint8_t* p = locate(addr, len, &gpu, &off);
  if (!p) return false;
  if (external(gpu, off, len)) return external_gpu_->read(off, out, len);
  std::memcpy(out, p, len);
  return true;
}

bool Host::bus_write(uint64_t addr, const uint8_t* data, uint32_t len) {
  bool gpu;
  uint64_t off;
  uint8_t* p = locate(addr, len, &gpu, &off);
  if (!p) return false;
  if (before_write_) before_write_();
  if (external(gpu, off, len)) {
    if (!external_gpu_->write(off, data, len)) return false;
  } else {
    std::memcpy(p, data, len);
  }
  ++stats_.writes;
  stats_.write_bytes += len;
  if (write_observer_) write_observer_(addr, len);
  return true;
}

void Host::send(RootPort& rp, TlpPtr tlp) {
  tlp->id = next_id();
  ++stats_.tlps_sent;
  rp.link->send(std::move(tlp));
}

void Host::issue_from_cpu(sc_time at, TlpPtr tlp) {
  // Uncached stores and loads leave the core in program order and reach the
  // root port mmio_post_latency_ns later.
  sc_time due = at + config_.mmio_post;
  if (!stores_due_.empty()) due = std::max(due, stores_due_.last_due());
  tlp->born = at;
  unsigned port = port_for_cpu(tlp->addr);
  stores_due_.push(due, {port, std::move(tlp)});
}

void Host::mmio_write(uint64_t addr, uint64_t value) {
  auto w = std::make_unique<Tlp>();
  w->kind = TlpKind::MemWrite;
  w->addr = addr;
  w->length = 8;
  w->requester = requester_id(node_, Function::Host);
  w->data.resize(8);
  std::memcpy(w->data.data(), &value, 8);
  issue_from_cpu(std::max(sim_time(), cpu_store_free_), std::move(w));
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
  issue_from_cpu(std::max(sim_time(), cpu_store_free_), std::move(r));
}

void Host::pio_write(uint64_t addr, const uint8_t* data, uint32_t len) {
  const uint32_t store = config_.pio_store_bytes;
  const sc_time gap = config_.pio_store_gap;
  sc_time at = std::max(sim_time(), cpu_store_free_);
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
    auto [port, tlp] = stores_due_.pop();
    send(ports_[port], std::move(tlp));
  }
}

void Host::tlp_arrived(LinkPort& port, TlpPtr tlp) {
  RootPort& rp = port_of(port);
  switch (tlp->kind) {
    case TlpKind::MemWrite: {
      uint64_t off;
      Memory* m = memory_for(rp, tlp->addr, tlp->length, &off);
      if (!m) {
        // Outside registered memory: the root complex drops it, never applies it.
        ++stats_.dropped_writes;
        port.release(*tlp);
        return;
      }
      // Posted writes stay in order: none becomes visible before an older one.
      // A memory that serves its requests in order (read_flush) takes none
      // before the read ahead of it is answered.
      const sc_time arrived = std::max(sim_time(), m->answered);
      sc_time visible = arrived + m->write_latency;
      sc_time taken = arrived;
      if (m->write_bytes_per_ns > 0) {
        // The memory takes the bytes at its write rate; the link's credits
        // come back as it does, so a faster sender is held back.
        sc_time start = std::max(arrived, m->write_free);
        m->write_free = start + sc_time(tlp->length / m->write_bytes_per_ns, sc_core::SC_NS);
        taken = m->write_free;
        visible = std::max(visible, m->write_free);
      }
      m->write_taken = std::max(m->write_taken, taken);
      if (!rp.writes_due.empty()) visible = std::max(visible, rp.writes_due.last_due());
      if (m == &rp.host_mem) rp.host_visible = visible;
      rp.writes_due.push(visible, std::move(tlp));
      return;
    }
    case TlpKind::MemRead:
      port.release(*tlp);  // the root complex queues requests internally
      serve_read(rp, std::move(tlp));
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
      // The load retires load_return later, and never before the writes into
      // host memory that reached this port ahead of its completion are
      // visible: a completion does not pass posted writes (PCIe ordering), so
      // what the CPU then reads of host memory has landed. Writes going on to
      // the GPU are ordered at the root complex as well; the GPU's own pace
      // of taking them does not hold the CPU's load.
      sc_time due = std::max(sim_time() + config_.load_return, rp.host_visible);
      if (!loads_due_.empty()) due = std::max(due, loads_due_.last_due());
      loads_due_.push(due, LoadDone{std::move(done), value, ok});
      return;
    }
  }
}

void Host::on_loads_due() {
  while (loads_due_.head_due()) {
    LoadDone l = loads_due_.pop();
    l.done(l.value, l.ok);
  }
}

void Host::on_writes_due() {
  for (unsigned i = 0; i < nports_; ++i) {
  RootPort& rp = ports_[i];
  while (rp.writes_due.head_due()) {
    TlpPtr w = rp.writes_due.pop();
    uint64_t off = 0;  // set by memory_for (GCC at -O3 cannot tell)
    Memory* m = memory_for(rp, w->addr, w->length, &off);
    if (before_write_) before_write_();
    if (external(m == &rp.gpu_mem, off, w->length)) {
      // A device that refuses the write has reported it; the bytes are lost
      // as a root complex loses a write it cannot apply.
      if (!external_gpu_->write(off, w->data.data(), w->length)) ++stats_.dropped_writes;
    } else
      std::memcpy(m->bytes + off, w->data.data(), w->length);
    ++stats_.writes;
    stats_.write_bytes += w->length;
    sc_time latency = sim_time() - w->born;
    stats_.write_latency_total += latency;
    stats_.write_latency_max = std::max(stats_.write_latency_max, latency);
    rp.link->release(*w);
    if (write_observer_) write_observer_(w->addr, w->length);
  }
  }
}

void Host::serve_read(RootPort& rp, TlpPtr req) {
  uint64_t off = 0;  // set by memory_for (GCC at -O3 cannot tell)
  Memory* m = memory_for(rp, req->addr, req->length, &off);
  Memory& engine = m ? *m : rp.host_mem;
  sc_time start = std::max(sim_time() + engine.read_latency, engine.read_free);
  // A read never passes a posted write that arrived before it.
  if (!rp.writes_due.empty()) start = std::max(start, rp.writes_due.last_due());
  // A GPU answers a read behind writes only once it has drained them into
  // its memory (gpu_read_flush_ns); until then nothing behind the read moves.
  if (m && m->read_flush > sc_core::SC_ZERO_TIME && m->write_taken > sc_core::SC_ZERO_TIME)
    start = std::max(start, m->write_taken + m->read_flush);
  // External GPU memory is fetched once per request, the same bytes the
  // completions would have carried from the arena; a device that refuses the
  // read aborts it (the DMA fails) rather than returning wrong bytes.
  std::vector<uint8_t> fetched;
  const bool ext = m && external(m == &rp.gpu_mem, off, req->length);
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
  const uint32_t max_cpl = rp.max_cpl;
  uint32_t remaining = req->length;
  sc_time ready = start;
  const uint8_t* bytes = ext ? fetched.data() : m->bytes + off;
  for (const Span& s : split_completions(req->addr, req->length, max_cpl,
                                         rp.rcb)) {
    const uint8_t* src = bytes + (s.addr - req->addr);
    TlpPtr cpl = make_completion(*req, s.addr, src, s.length, remaining);
    remaining -= s.length;
    ready += engine.read_time(s.length);
    engine.completions.push(ready, std::move(cpl));
  }
  engine.read_free = ready;
  if (m->read_flush > sc_core::SC_ZERO_TIME) m->answered = ready;
}

void Host::on_completions_due() {
  for (unsigned i = 0; i < nports_; ++i)
    for (Memory* m : {&ports_[i].host_mem, &ports_[i].gpu_mem})
      while (m->completions.head_due()) {
        TlpPtr cpl = m->completions.pop();
        // The memory is read when the completion leaves, not when the request
        // arrived: a posted write that arrived before the read became visible
        // in between (serve_read starts no read before it), and the read must
        // return its bytes (a chain's read-after-write, PCIe ordering).
        if (cpl->status == CplStatus::Success && cpl->length > 0)
          read(cpl->addr, cpl->data.data(), cpl->length);
        send(ports_[i], std::move(cpl));
      }
}

}  // namespace p2
