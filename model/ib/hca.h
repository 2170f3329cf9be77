// hca.h - one node's dual-port QDR InfiniBand host channel adapter: its BAR0
// registers (ib_hw.h), a DMA engine on its PCIe Gen3 slot link, the send and
// receive queues and the completion queue it shares with the host, and two
// ports, one per rail.
//
// Send side, per work request: the SQ doorbell arrives; a doorbell latency
// later the HCA fetches the WQE (a 64-byte DMA read of host memory); a WQE
// latency after it arrives the HCA checks it, picks the rail(s), segments the
// message into MTU packets and reads their data (MRRS reads, up to
// ib_hca_max_reads outstanding); a packet whose data is complete is ready for
// its port a tx latency later and leaves when the port has credits. The
// destination acknowledges each message part; when all parts are
// acknowledged, a signaled WQE's completion entry is written to the CQ.
// Receive side, per packet: a rx latency after its last byte arrives it is
// placed (PCIe writes of at most MPS: at the remote address for RDMA writes,
// in the next posted receive buffer for SENDs) and its link buffer released;
// after a message's last packet the receive completion (SEND, WRITE_IMM) is
// written behind the data, and the acknowledgement sent. Receive buffers are
// fetched (32-byte DMA reads) when the RQ doorbell is rung.
// RDMA READ and atomics (README.md): the requester sends a request packet
// per part (rail) and keeps at most ib_hca_max_rd_atomic outstanding per
// rail, its send queue waiting behind one that would exceed that; the
// responder, a read latency after the request is placed, reads its memory
// (MRRS reads, as a send's data) into MTU response packets, or runs the
// atomic on its atomic unit (one at a time: an 8-byte read, the operation,
// the result written); the requester places the responses at local_addr and
// writes its completion behind the last.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include <systemc>

#include "core/traffic.h"
#include "core/agenda.h"
#include "ib/config.h"
#include "ib/connections.h"
#include "ib/ib_link.h"
#include "ib/responder.h"
#include "ib_hw.h"
#include "pcie/link.h"

namespace p2 {

struct HcaStats {
  uint64_t wqes = 0, messages_sent = 0, bytes_sent = 0, errors = 0;
  uint64_t messages_received = 0, bytes_received = 0;
  uint64_t cqes = 0, cq_overflow = 0, dma_reads = 0, dma_read_bytes = 0;
  std::array<uint64_t, IB_PORTS> packets_out{}, packets_in{};
  uint64_t rnr_waits = 0;  // SENDs that found no posted receive buffer
  uint64_t reads_served = 0, atomics_served = 0;  // requests this HCA answered as responder
  uint64_t rd_atomic_waits = 0;  // work requests that waited for the initiator depth
  sc_core::sc_time latency_total, latency_min, latency_max;  // doorbell of a WQE to its ACK
};

class Hca : public sc_core::sc_module, public LinkClient, public IbClient {
 public:
  Hca(sc_core::sc_module_name name, unsigned node, unsigned nodes, const IbConfig& config);
  void attach_pcie(LinkPort& port);         // the Endpoint end of the slot link
  void attach_rail(unsigned rail, IbPort& port);

  void tlp_arrived(LinkPort& port, TlpPtr tlp) override;
  bool arrival_is_silent(const LinkPort& port, const Tlp& tlp) const override;
  void tx_space(LinkPort& port) override;
  void packet_arrived(IbPort& port, IbPacketPtr p, sc_core::sc_time tail) override;
  void tx_ready(IbPort& port) override;

  uint64_t reg_peek(uint64_t offset) const;
  void set_change_observer(std::function<void()> f) { observer_ = std::move(f); }
  const HcaStats& stats() const { return stats_; }
  // Each message accepted is a transfer: to its destination, or from it for
  // an RDMA read (its data comes back).
  void set_traffic_observer(TrafficObserver* observer) { traffic_ = observer; }
  uint64_t tlps_created() const { return tlps_created_; }
  // Why nothing moves here, or "" (diagnosis when the simulation stalls).
  std::string describe_stall() const;

 private:
  struct Packet;  // a packet being built from host memory
  struct Message {
    ib_wqe wqe{};
    uint64_t id = 0;
    uint32_t msn = 0;
    unsigned parts = 0, acked = 0;
    uint8_t status = IB_OK;
    unsigned last_rail = 0;
    sc_core::sc_time doorbell;
  };
  struct Packet {
    IbPacketPtr p;
    uint32_t need = 0, have = 0;
    bool ready = false;  // all its data read; leaves after the rail's earlier packets
  };
  struct Read {  // one outstanding DMA read
    enum class Kind { Wqe, Rqe, Data, Atomic } kind = Kind::Data;
    uint64_t addr = 0;
    uint32_t length = 0, received = 0;
    Packet* packet = nullptr;
    uint32_t packet_offset = 0;
    uint64_t generation = 0;
    std::vector<uint8_t> buf;  // WQE, RQE and atomic operand fetches
  };

  struct RecvState {  // a message arriving on one rail from one source
    bool active = false;
    ib_rqe rqe{};
    uint8_t status = IB_OK;
    uint32_t bytes = 0;
  };

  // PCIe side.
  void pcie_send(TlpPtr tlp);
  void pcie_drain();
  void issue_reads();
  void read_done(Read& r, const Tlp& cpl);
  void mmio_write(uint64_t reg, uint64_t value);
  void write_host(uint64_t addr, const uint8_t* data, uint32_t len);
  // Queues.
  void fetch_wqes();
  void fetch_rqes();
  void start_message(const ib_wqe& w, sc_core::sc_time doorbell);
  void start_now(const ib_wqe& w, sc_core::sc_time doorbell);
  bool initiator_depth_ok(const ib_wqe& w) const;
  void resume_stalled();
  Packet* build_packet(IbPacketPtr p, uint64_t src_addr);
  bool make_packet();
  // RDMA READ and atomics: what the responder asks of this HCA, and the
  // responses at the requester.
  IbResponder::Host responder_host();
  void response_arrived(IbPacket& p, unsigned rail);
  void packet_ready(Packet* pk);
  void rail_drain(unsigned rail);
  void process_rx(unsigned rail);
  void write_cqe(ib_cqe e);
  void finish_message(Message& m);
  bool local_ok(uint64_t addr, uint64_t len) const;
  void changed() { if (observer_) observer_(); }

  unsigned node_, nodes_;
  TrafficObserver* traffic_ = nullptr;
  IbConfig config_;
  LinkPort* pcie_ = nullptr;
  std::array<IbPort*, IB_PORTS> rails_{};
  Agenda agenda_;
  IbResponder responder_;
  std::function<void()> observer_;

  // Registers.
  uint64_t sq_base_ = 0, sq_size_ = 0, sq_prod_ = 0, sq_fetched_ = 0;
  uint64_t rq_base_ = 0, rq_size_ = 0, rq_prod_ = 0, rq_fetched_ = 0, rq_used_ = 0;
  uint64_t cq_base_ = 0, cq_size_ = 0, cq_head_ = 0, cq_tail_ = 0, cq_overflow_ = 0;
  uint64_t error_ = 0;
  uint64_t sq_generation_ = 0, rq_generation_ = 0;
  bool wqe_fetching_ = false, rqe_fetching_ = false;
  std::deque<sc_core::sc_time> doorbells_;  // when each posted WQE's doorbell arrived

  // DMA reads.
  std::deque<Read> fetch_reads_, data_reads_;  // waiting for a tag
  // Outstanding reads, by tag (a completion finds its read without a search).
  std::array<Read, 256> reads_;
  std::array<bool, 256> read_out_{};
  std::vector<uint8_t> free_tags_;
  std::deque<TlpPtr> pcie_out_;
  uint64_t next_tlp_id_ = 0, tlps_created_ = 0;

  // Send side.
  std::map<uint64_t, Message> messages_;  // by id, until acknowledged
  uint64_t next_msg_id_ = 1;
  std::vector<uint32_t> msn_to_;           // per destination
  unsigned next_rail_ = 0;
  IbConnections connections_{config_, node_, next_packet_id_};  // what is left to make into packets
  std::deque<std::unique_ptr<Packet>> building_;  // in read order
  unsigned building_on_[IB_PORTS] = {};           // of them, per rail
  std::array<std::deque<IbPacketPtr>, IB_PORTS> tx_;  // ready to send, per rail
  uint64_t next_packet_id_ = 0;
  std::array<unsigned, IB_PORTS> rd_out_{};  // RDMA reads and atomics outstanding, per rail
  std::deque<std::pair<ib_wqe, sc_core::sc_time>> stalled_;  // WQEs waiting behind the depth

  // Receive side.
  std::deque<ib_rqe> rq_cache_;
  std::array<std::deque<std::pair<IbPacketPtr, uint32_t /*wire bytes*/>>, IB_PORTS> rx_;
  std::array<bool, IB_PORTS> rx_busy_{};
  std::vector<std::array<RecvState, IB_PORTS>> recv_;  // per source

  HcaStats stats_;
};

}  // namespace p2
