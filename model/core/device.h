// device.h - a node's device as the simulator's front end sees it: BARs the
// node's CPU stores to and loads from, an instant view of its registers for
// waits and messages, and a signal that its state changed. The front end
// serves every device through this and knows no device type; PEACH2
// (peach2/network.h) is one implementation.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace p2 {

class NodeDevice {
 public:
  virtual ~NodeDevice() = default;
  // The word the library asks for ("peach2"), as in the topology's `device` line.
  virtual const char* kind() const = 0;

  // Whether a CPU access of `len` bytes at `offset` of BAR `bar` is one the
  // device decodes (a 64-bit register, a store inside a window).
  virtual bool access_ok(unsigned bar, uint64_t offset, uint64_t len) const = 0;

  // The node's CPU, at the current simulated time. Stores are posted; a load
  // calls `done` when its completion reaches the CPU (ok false: it failed).
  virtual void mmio_write(unsigned bar, uint64_t offset, uint64_t value) = 0;
  virtual void mmio_read(unsigned bar, uint64_t offset,
                         std::function<void(uint64_t value, bool ok)> done) = 0;
  // Write-combined CPU stores of `len` bytes, in address order (PIO).
  virtual void bar_write(unsigned bar, uint64_t offset, const uint8_t* data, uint32_t len) = 0;

  // A register's value now, at no simulated cost (waits, diagnostics).
  virtual uint64_t peek(unsigned bar, uint64_t offset) const = 0;
  // Called whenever register state a wait may look at has changed.
  virtual void set_change_observer(std::function<void()> f) = 0;

  // Whether `value`, read from this register, tells a CPU polling it that
  // nothing has come yet (PEACH2: an empty notification table). A job whose
  // live ranks only get such answers, while nothing else moves, is stuck
  // although simulated time advances with the polls (Frontend::check_stall).
  virtual bool empty_poll(unsigned bar, uint64_t offset, uint64_t value) const {
    (void)bar, (void)offset, (void)value;
    return false;
  }

  // A register's name for messages ("DMA0 STATUS").
  virtual std::string describe(unsigned bar, uint64_t offset) const = 0;
  // What a rank waiting for the memory word at `addr` (& mask == value) waits
  // for in this device's terms ("a DMA notification (ring entry 4)"), or ""
  // when the word means nothing to the device.
  virtual std::string describe_memory_wait(uint64_t addr, uint64_t mask, uint64_t value) const = 0;
};

}  // namespace p2
