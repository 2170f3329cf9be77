// switch.h - one rail's InfiniBand switch: a single crossbar (a 108-port
// QDR switch, up to 64 nodes; port n cabled to node n's HCA on this rail),
// virtual cut-through. Per packet: its header arrives on an input, the output
// is the destination node's port (linear forwarding table), it becomes
// eligible a switch latency later and starts on that output, in arrival order,
// as soon as the output link is idle and has credits; it leaves no earlier
// than its last byte arrives. The input buffer space is released when the
// packet starts on its output.
#pragma once

#include <deque>
#include <memory>
#include <vector>

#include <systemc>

#include "core/agenda.h"
#include "ib/config.h"
#include "ib/ib_link.h"

namespace p2 {

struct IbSwitchStats {
  uint64_t packets = 0;
  sc_core::sc_time queue_total;  // eligible to started, summed
};

class IbSwitch : public sc_core::sc_module, public IbClient {
 public:
  IbSwitch(sc_core::sc_module_name name, unsigned ports, const IbConfig& config);
  void attach(unsigned port, IbPort& end);
  void packet_arrived(IbPort& port, IbPacketPtr p, sc_core::sc_time tail) override;
  void tx_ready(IbPort& port) override;
  const IbSwitchStats& stats() const { return stats_; }
  // Packets waiting for an output (diagnosis).
  size_t queued() const;

 private:
  struct Waiting {
    IbPacketPtr p;
    sc_core::sc_time tail;
    unsigned in;
    uint32_t wire_bytes;
    sc_core::sc_time eligible;
  };
  void try_output(unsigned out);
  IbConfig config_;
  std::vector<IbPort*> ports_;
  std::vector<std::deque<Waiting>> outputs_;  // eligible packets per output, in order
  Agenda agenda_;
  IbSwitchStats stats_;
};

}  // namespace p2
