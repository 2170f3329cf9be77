// packet.h - one SR8000 network packet: a header (destination node, size,
// remote-DMA area and offset, the flag to write after the data) and at most
// sr8000_packet_bytes of data; the links it still has to cross.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <systemc>

namespace p2 {

class SrLink;

// Ack: the destination NIA's acknowledgement of a remote write's last packet,
// back to the source NIA (header only), which then reports the TCW done.
enum class SrPacketKind { Write, Broadcast, Ack };

struct SrPacket {
  SrPacketKind kind = SrPacketKind::Write;
  unsigned src = 0, dst = 0;     // broadcast: dst unused
  unsigned color = 0;            // broadcast: its colour
  uint64_t group = 0;            // broadcast: the root's group of that colour (SR_GROUP_BOX)
  uint64_t message = 0;          // the TCW kick it belongs to, unique per source (an ack: the one it acknowledges)
  uint32_t area = 0;             // where the data lands: area and offset of this packet's bytes
  uint64_t offset = 0;
  uint64_t message_offset = 0;   // the first packet's offset (broadcast arming check)
  uint64_t message_bytes = 0;    // the whole transfer
  bool first = false, last = false;
  bool flag = false;             // last packet: then write flag_value
  uint32_t flag_area = 0;
  uint64_t flag_offset = 0, flag_value = 0;
  std::vector<uint8_t> data;
  std::vector<SrLink*> route;    // links from the source; route[hop] carries it now
  size_t hop = 0;
  sc_core::sc_time born;
};
using SrPacketPtr = std::shared_ptr<SrPacket>;

// The end of a link: a crossbar, a node's router, or an NIA.
class SrSink {
 public:
  virtual ~SrSink() = default;
  virtual void packet_arrived(SrLink& from, SrPacketPtr p) = 0;
};

}  // namespace p2
