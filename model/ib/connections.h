// connections.h - an HCA's send engine: the reliable connections (one per
// destination, as verbs' RC queue pairs) with messages to send, and the
// packets made from them one at a time. Messages of several packets are
// served one after the other in the order they were posted; a message of
// one packet (a SEND of a header: a rendezvous RTS, CTS or FIN; a read's
// request) on a connection with nothing before it goes out at the next
// packet boundary, so that a CTS to one node does not wait behind a long
// RDMA write to another. Each connection's messages (an RDMA write and the
// FIN behind it) keep their order. Within a message, its parts (rails) take
// turns so that both rails fill at once. Depends on the transport's rules
// (transport.h) and the packet (packet.h).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <vector>

#include <systemc>

#include "ib/config.h"
#include "ib/packet.h"
#include "ib/transport.h"
#include "ib_hw.h"

namespace p2 {

class IbConnections {
 public:
  // A checked work request to send: its message, its parts over the rails.
  struct Message {
    ib_wqe wqe{};
    uint64_t id = 0;
    uint32_t msn = 0;
    sc_core::sc_time doorbell;
    std::vector<IbPart> parts;
  };
  // `packet_ids`: the HCA's counter, which its responder's packets share.
  IbConnections(const IbConfig& config, unsigned node, uint64_t& packet_ids)
      : config_(config), node_(node), packet_ids_(packet_ids) {}

  bool busy(unsigned dest) const { return queues_.count(dest) != 0; }
  void add(const Message& m);
  // A read's or atomic's request packets, one per part.
  std::vector<IbPacketPtr> requests(const Message& m);
  // The next packet and the local address of its payload; false when no
  // connection has work.
  bool next(IbPacketPtr* packet, uint64_t* src);

 private:
  struct Stream {
    Message m;
    uint64_t seq = 0;  // post order over all connections
    bool single = false;  // one packet: may pass the messages of other connections
    std::vector<uint32_t> sent;
    std::vector<bool> started;
    size_t part = 0;  // the part whose packet comes next
  };
  IbPacketPtr packet(const Message& m, unsigned rail);
  IbPacketPtr request(const Message& m, const IbPart& pt);

  const IbConfig& config_;
  unsigned node_;
  uint64_t& packet_ids_;
  std::map<unsigned, std::deque<Stream>> queues_;  // by destination, in post order
  uint64_t posted_ = 0;
};

}  // namespace p2
