// ib_link.h - one 4X QDR InfiniBand link between two ends (an HCA port and a
// switch port): serialisation at the link rate after 8b/10b, a fixed latency,
// and link-level credit flow control (one virtual lane): a packet starts only
// when the far receive buffer has room for all of it (64-byte blocks), and
// the space comes back, one link latency later, when the receiver releases it.
// A packet is handed to the receiver when its header has arrived (the switch
// cuts through), with the time its last byte arrives.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include <systemc>

#include "core/agenda.h"
#include "ib/config.h"
#include "ib/packet.h"

namespace p2 {

class IbPort;

class IbClient {
 public:
  virtual ~IbClient() = default;
  // A packet's header arrived at `port`; its last byte arrives at `tail`. It
  // holds its receive buffer until the client calls port.release(wire bytes).
  virtual void packet_arrived(IbPort& port, IbPacketPtr p, sc_core::sc_time tail) = 0;
  // `port` may be able to send again (its wire freed or credits came back).
  virtual void tx_ready(IbPort& port) = 0;
};

struct IbDirStats {
  uint64_t packets = 0, payload_bytes = 0, wire_bytes = 0;
  sc_core::sc_time busy, credit_stall;
};

class IbLink;

class IbPort {
 public:
  void attach(IbClient* client, unsigned tag) { client_ = client; tag_ = tag; }
  unsigned tag() const { return tag_; }  // the owner's number for this port
  // Whether a packet of `wire_bytes` can start now: the wire is idle and the
  // far buffer has room. A false answer starts counting credit stall.
  bool ready(uint32_t wire_bytes);
  // Starts the packet now (ready() must be true); its last byte leaves no
  // earlier than `not_before_end` (a cut-through packet still arriving).
  // Returns when its last byte leaves.
  sc_core::sc_time send(IbPacketPtr p, sc_core::sc_time not_before_end);
  void release(uint32_t wire_bytes);  // a received packet left this end's buffer
  const IbDirStats& tx_stats() const;
  const std::string& name() const { return name_; }
  IbPort& peer() const;

 private:
  friend class IbLink;
  IbPort(IbLink* link, int side, std::string name) : link_(link), side_(side), name_(std::move(name)) {}
  IbLink* link_;
  int side_;
  std::string name_;
  IbClient* client_ = nullptr;
  unsigned tag_ = 0;
};

class IbLink : public sc_core::sc_module {
 public:
  IbLink(sc_core::sc_module_name name, const IbLinkConfig& config);
  ~IbLink() override;
  IbPort& end_a() { return *ends_[0]; }
  IbPort& end_b() { return *ends_[1]; }
  const IbLinkConfig& config() const { return config_; }

 private:
  friend class IbPort;
  struct Dir {
    sc_core::sc_time wire_free;
    uint32_t credits = 0;           // far buffer blocks free
    sc_core::sc_time stall_since;   // a sender found no credits
    bool stalled = false;
    IbDirStats stats;
  };
  IbLinkConfig config_;
  std::array<std::unique_ptr<IbPort>, 2> ends_;
  std::array<Dir, 2> dirs_;  // dirs_[s]: transmitted by end s
  Agenda agenda_;
};

}  // namespace p2
