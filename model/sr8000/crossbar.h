// crossbar.h - an SR8000 switch: an x-crossbar (the nodes of one row), a
// y-crossbar (one column, 2D), the serialisation crossbar (2D) or a node's
// network router (2D: where a packet turns from its x- to its y-crossbar).
//
// Per packet: its head is forwarded, `latency` after it arrived, onto the
// next link of its route (cut-through; the link queues it behind what it is
// sending, or until the next input buffer has room); its input buffer space
// goes back to the link it came on once its tail has left. A broadcast packet at the end of its route fans out: the
// serialisation crossbar (the x-crossbar itself in 1D) copies it to every
// x-crossbar with members, passing one broadcast at a time so that
// broadcasts never overlap; an x-crossbar copies it to each member of its
// row but the root.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "core/agenda.h"
#include "sr8000/config.h"
#include "sr8000/link.h"
#include "sr8000/packet.h"

namespace p2 {

struct SrSwitchStats {
  uint64_t packets = 0, broadcast_copies = 0;
  sc_core::sc_time serial_wait;  // broadcasts held back behind another one
};

class SrSwitch : public SrSink {
 public:
  enum class Role { XCrossbar, YCrossbar, Serialiser, Router };
  SrSwitch(std::string name, Role role, unsigned index, const Sr8000Config& config,
           Agenda& agenda, sc_core::sc_time latency)
      : name_(std::move(name)), role_(role), index_(index), config_(config), agenda_(agenda),
        latency_(latency) {}

  // Fan-out targets. An x-crossbar: `down[n]` to each node n of the machine
  // (nullptr where n is not in its row); the serialiser: `down[r]` to the
  // x-crossbar of row r. An x-crossbar that serialises itself (1D) has
  // serialises() true.
  void set_fanout(std::vector<SrLink*> down, bool serialises) {
    down_ = std::move(down);
    serialises_ = serialises;
  }

  void packet_arrived(SrLink& from, SrPacketPtr p) override;
  const std::string& name() const { return name_; }
  const SrSwitchStats& stats() const { return stats_; }

 private:
  // `in`: the link the packet came on, whose buffer space it gives back once
  // its tail (every copy's tail) has left this switch.
  void forward(SrLink* in, SrPacketPtr p);
  void serialise(SrLink* in, SrPacketPtr p);
  void fan_out(SrLink* in, const SrPacketPtr& p);

  std::string name_;
  Role role_;
  unsigned index_;
  const Sr8000Config& config_;
  Agenda& agenda_;
  sc_core::sc_time latency_;
  std::vector<SrLink*> down_;
  bool serialises_ = false;
  // Serialisation: the broadcast passing now (source, message) and those
  // waiting for it to end.
  bool busy_ = false;
  unsigned owner_src_ = 0;
  uint64_t owner_message_ = 0;
  struct Held {
    sc_core::sc_time since;
    SrLink* in;
    SrPacketPtr p;
  };
  std::deque<Held> held_;
  SrSwitchStats stats_;
};

}  // namespace p2
