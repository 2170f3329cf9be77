// registers.h - BAR0 of a PEACH2 board: identification, the cycle counter,
// the routing table, the DMA channel registers (held by the DMAC), the
// register-mode descriptor slots, and the notification table.
//
// Per TLP: a memory write to BAR0 takes effect reg_access_cycles after it
// arrives; a memory read is answered by an 8-byte completion that leaves then.
// Accesses must be 8 bytes, 8-byte aligned; others are dropped (writes) or
// answered Unsupported Request (reads).
//
// A notification write does not count at once: the data it follows may still
// be on its way from this board to host memory. The unit first sends a
// zero-length read to the host (a flush: PCIe reads never pass posted writes),
// and records the notification when that read completes, in arrival order.
#pragma once

#include <cstdint>
#include <functional>
#include <deque>
#include <map>

#include <systemc>

#include "peach2/router.h"
#include "sim/clock.h"
#include "sim/params.h"
#include "sim/timed_queue.h"

namespace p2 {

class Dmac;

// Arrivals per (slot, tag), bounded in distinct pairs like the chip's table.
class NotifyTable {
 public:
  explicit NotifyTable(size_t capacity) : capacity_(capacity) {}
  void raise(unsigned slot, unsigned tag);
  unsigned pending(unsigned slot, unsigned tag) const;
  bool consume(unsigned slot, unsigned tag);
  uint64_t overflow() const { return overflow_; }
  uint64_t raised() const { return raised_; }

 private:
  size_t capacity_;
  std::map<uint64_t, unsigned> pending_;
  uint64_t overflow_ = 0, raised_ = 0;
};

class Registers : public sc_core::sc_module, public TlpSink {
 public:
  SC_HAS_PROCESS(Registers);
  Registers(sc_core::sc_module_name name, unsigned node, unsigned nnodes, const Params& params,
            Router& router);
  void set_dmac(Dmac* dmac) { dmac_ = dmac; }
  void set_port_modes(uint64_t rc_mask) { port_modes_ = rc_mask; }
  void set_change_observer(std::function<void()> f) { changed_ = std::move(f); }
  void notify_changed() const {
    if (changed_) changed_();
  }

  // Register semantics without bus timing (used for TLPs after their access
  // time, and for the emulator's instant views).
  uint64_t read(uint64_t offset) const;
  void write(uint64_t offset, uint64_t value);

  NotifyTable& notifications() { return notify_; }
  const NotifyTable& notifications() const { return notify_; }
  uint64_t bad_accesses() const { return bad_accesses_; }

  void accept(TlpPtr tlp) override;

 private:
  void on_access_due();
  void flush_then_raise(uint64_t word);

  unsigned node_, nnodes_;
  const Params& params_;
  ChipClock clock_;
  Router& router_;
  Dmac* dmac_ = nullptr;
  uint64_t port_modes_ = 0;
  uint64_t notify_select_ = 0;
  NotifyTable notify_;
  uint64_t bad_accesses_ = 0;
  TimedQueue<TlpPtr> accesses_;
  std::deque<uint64_t> flushing_;  // notification words waiting for their flush
  uint8_t next_flush_tag_ = 0;
  std::function<void()> changed_;
};

}  // namespace p2
