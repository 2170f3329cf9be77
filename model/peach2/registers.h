// registers.h - BAR0 of a PEACH2 board: identification, the cycle counter,
// the routing table, the DMA channel registers (held by the DMAC), the
// register-mode descriptor slots, and the notification table.
//
// Per TLP: a memory write to BAR0 takes effect reg_access_cycles after it
// arrives; a memory read is answered by an 8-byte completion that leaves then.
// Accesses must be 8 bytes, 8-byte aligned; others are dropped (writes) or
// answered Unsupported Request (reads).
//
// A notification write (NOTIFY_RAISE) becomes an entry appended to the
// notification ring in this node's host memory: a posted write through the
// crossbar to the N port, so it follows any data that arrived before it on the
// same input. While the ring is unset or full (HEAD - TAIL == size) the
// notification is dropped and counted. While the notification table is on
// (NOTIFY_TABLE_ON, tcaDMAUseNotifyInternal) the entry stays on the chip, in a
// FIFO of notify_table_entries that reads of NOTIFY_POP drain one entry each;
// one that finds the table full goes to the ring.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>

#include <systemc>

#include "peach2/router.h"
#include "core/clock.h"
#include "peach2/config.h"
#include "core/timed_queue.h"

namespace p2 {

class Dmac;

class Registers : public sc_core::sc_module, public TlpSink {
 public:
  Registers(sc_core::sc_module_name name, unsigned node, unsigned nnodes, const ChipConfig& config,
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

  uint64_t notifications() const { return ring_head_; }  // written to the ring
  uint64_t table_notifications() const { return table_serial_; }  // kept on the chip
  uint64_t dropped_notifications() const { return ring_overflow_; }
  uint64_t bad_accesses() const { return bad_accesses_; }

  void accept(TlpPtr tlp) override;

 private:
  void on_access_due();
  void append_notification(uint64_t word);
  uint64_t pop_table();  // NOTIFY_POP's value, removing what it returns

  unsigned node_, nnodes_;
  const RegistersConfig& config_;
  ChipClock clock_;
  Router& router_;
  Dmac* dmac_ = nullptr;
  uint64_t port_modes_ = 0;
  uint64_t ring_base_ = 0, ring_size_ = 0, ring_head_ = 0, ring_tail_ = 0, ring_overflow_ = 0;
  uint64_t bad_accesses_ = 0;
  bool table_on_ = false;
  uint64_t table_serial_ = 0;       // entries ever put in the table
  std::deque<uint64_t> table_;      // entries, oldest first
  TimedQueue<TlpPtr> accesses_;

  std::function<void()> changed_;
};

}  // namespace p2
