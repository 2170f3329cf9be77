// crossbar.h - an SR8000 switch: an x-crossbar (the nodes of one row), a
// y-crossbar (one column of a plane), a z-crossbar (one column through the
// planes, 3D), a node's network router (where a packet turns from one
// dimension's crossbar to the next), the serialisation crossbar (2D and
// 3D), or a plane's broadcast distributor (3D).
//
// Per packet: its head is forwarded, `latency` after it arrived, onto the
// next link of its route (cut-through; the link queues it behind what it is
// sending, or until the next input buffer has room); its input buffer space
// goes back to the link it came on once its tail has left. A broadcast
// packet at the end of its route fans out: the serialisation crossbar (the
// x-crossbar itself in 1D) passes one broadcast at a time, so that
// broadcasts never overlap, and copies it to each plane (3D) or x-crossbar
// (2D) the group spans; a plane's distributor copies it to the x-crossbars
// of the group's rows in it; an x-crossbar to each member of its row but the
// root. A crossbar has 8 ports: the 64 x-crossbars of a 3D machine are one
// distributor stage further from the serialiser than the 8 of a 2D one.
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
  enum class Role { XCrossbar, YCrossbar, ZCrossbar, Serialiser, Distributor, Router };
  // What a fan-out copy goes to: a node, an x-crossbar (by its index: row +
  // Y * plane) or a plane's distributor (by the plane).
  enum class Level { Node, XCrossbar, Plane };
  struct Out {
    unsigned at;
    SrLink* link;
  };
  SrSwitch(std::string name, Role role, unsigned index, const Sr8000Config& config,
           Agenda& agenda, sc_core::sc_time latency)
      : name_(std::move(name)), role_(role), index_(index), config_(config), agenda_(agenda),
        latency_(latency) {}

  // Fan-out targets, all of one level: an x-crossbar's are its nodes, a
  // distributor's the x-crossbars of its plane, the serialiser's the planes
  // (3D) or the x-crossbars (2D). `serialises`: this switch passes one
  // broadcast at a time (the serialiser; the x-crossbar in 1D).
  void set_fanout(Level level, std::vector<Out> down, bool serialises) {
    level_ = level;
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
  bool spans(const SrPacket& p, unsigned at) const;

  Level level_ = Level::Node;
  std::vector<Out> down_;
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
