// link.h - one direction of an SR8000 crossbar link (node to crossbar,
// crossbar to node, crossbar to crossbar): serialises header + data at
// sr8000_link_mbps, one packet after another in the order they are handed
// over, and hands each to the far end sr8000_link_latency_ns after its head
// (a switch, which forwards cut-through) or its tail (an NIA, which needs the
// whole packet) has been clocked out. A link into a node of a 2D machine ends
// at the node's NIA and at its network router: a packet whose route goes on
// turns there (head), one that ends there goes to the NIA (tail).
#pragma once

#include <string>

#include "sr8000/agenda.h"
#include "sr8000/config.h"
#include "sr8000/packet.h"

namespace p2 {

struct SrLinkStats {
  uint64_t packets = 0, payload_bytes = 0, wire_bytes = 0;
  sc_core::sc_time busy, wait;  // clocking out; packets waiting for the link
};

class SrLink {
 public:
  enum class Deliver { Head, Tail };
  SrLink(std::string name, const Sr8000Config& config, SrAgenda& agenda, SrSink& sink,
         Deliver deliver, SrSink* through = nullptr)
      : name_(std::move(name)), config_(config), agenda_(agenda), sink_(sink), deliver_(deliver),
        through_(through) {}

  // Starts clocking `p` out now, or once the packets before it are out.
  // Returns when its tail has left.
  sc_core::sc_time send(SrPacketPtr p);

  const std::string& name() const { return name_; }
  const SrLinkStats& stats() const { return stats_; }

 private:
  std::string name_;
  const Sr8000Config& config_;
  SrAgenda& agenda_;
  SrSink& sink_;
  Deliver deliver_;
  SrSink* through_;
  sc_core::sc_time free_;  // the link is clocking out until then
  SrLinkStats stats_;
};

}  // namespace p2
