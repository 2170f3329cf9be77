// link.h - one direction of an SR8000 crossbar link (node to crossbar,
// crossbar to node, crossbar to crossbar), with credit flow control.
//
// Packets are clocked out (header sr8000_packet_header_bytes + data, at
// sr8000_link_mbps) one after another in the order they were handed over,
// each only once the receiving end's input buffer (sr8000_rx_buffer_bytes)
// has room for all of it. The far end gets a packet sr8000_link_latency_ns
// after its head (a switch: cut-through) or its tail (an NIA, which needs the
// whole packet) left, and gives its buffer space back with release() once
// the packet has left it (a switch: its tail is out on the next link; an
// NIA: its data is in memory). So a busy output backs up into the links
// feeding it, and on into the senders' NIAs. A link into a node of a 2D
// machine ends at the node's NIA and at its network router: a packet whose
// route goes on turns there (head), one that ends there goes to the NIA.
#pragma once

#include <deque>
#include <functional>
#include <string>

#include "core/agenda.h"
#include "sr8000/config.h"
#include "sr8000/packet.h"

namespace p2 {

struct SrLinkStats {
  uint64_t packets = 0, payload_bytes = 0, wire_bytes = 0;
  // Clocking out; packets waiting for the link (busy, or no credit).
  sc_core::sc_time busy, wait;
};

class SrLink {
 public:
  enum class Deliver { Head, Tail };
  SrLink(std::string name, const Sr8000Config& config, Agenda& agenda, SrSink& sink,
         Deliver deliver, SrSink* through = nullptr)
      : name_(std::move(name)), config_(config), agenda_(agenda), sink_(sink), deliver_(deliver),
        through_(through), credits_(config.rx_buffer_bytes) {}

  // Queues `p`; it goes as soon as the link is free and the far end has room.
  // `left`: called when its tail has left (whatever held it may let go).
  void send(SrPacketPtr p, std::function<void()> left = nullptr);
  // The far end has passed on a packet of `wire_bytes` (header + data).
  void release(uint64_t wire_bytes);

  uint64_t wire_bytes(const SrPacket& p) const { return config_.header_bytes + p.data.size(); }
  const std::string& name() const { return name_; }
  const SrLinkStats& stats() const { return stats_; }
  // Packets waiting to go (a stall report names the links that hold some).
  size_t queued() const { return queue_.size(); }

 private:
  struct Waiting {
    SrPacketPtr p;
    std::function<void()> left;
    sc_core::sc_time since;
  };
  void pump();

  std::string name_;
  const Sr8000Config& config_;
  Agenda& agenda_;
  SrSink& sink_;
  Deliver deliver_;
  SrSink* through_;
  uint64_t credits_;        // bytes the far end's input buffer has free
  sc_core::sc_time free_;   // the link is clocking out until then
  bool pump_armed_ = false; // a pump is scheduled for when the link is free
  std::deque<Waiting> queue_;
  SrLinkStats stats_;
};

}  // namespace p2
