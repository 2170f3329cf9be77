// packet.h - an InfiniBand packet as the model moves it: the transport fields
// the HCAs act on, the payload's real bytes, and its size on the wire.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <systemc>

namespace p2 {

struct IbPacket {
  // Data: a SEND, RDMA write, or an RDMA read or atomic request; Response:
  // the responder's read data or an atomic's old value, back to the requester.
  enum class Kind : uint8_t { Data, Ack, Response };
  Kind kind = Kind::Data;
  unsigned src = 0, dst = 0;  // nodes (the LIDs' nodes)
  unsigned rail = 0;
  uint8_t opcode = 0;         // ib_opcode of the message
  bool first = false, last = false;  // of its message part
  uint32_t msg_offset = 0;    // of this packet's payload in the whole message
  uint32_t msg_length = 0;    // the whole message
  uint64_t remote_addr = 0;   // RDMA write: where this packet's payload goes; read, atomic: the source
  uint32_t read_length = 0;   // RDMA read request: bytes of this part
  uint64_t compare_add = 0, swap = 0;  // atomic request: the operands
  uint64_t atomic_old = 0;    // atomic response: the word's old value (AtomicAckETH)
  uint32_t imm = 0, msn = 0;
  uint64_t msg_id = 0;        // the sender's message, echoed by its ACK
  uint8_t status = 0;         // ACK, Response: ib_status of the receiving side
  std::vector<uint8_t> data;
  uint32_t wire_bytes = 0;    // headers, payload, CRCs
  uint64_t id = 0;
  sc_core::sc_time born;
};

using IbPacketPtr = std::unique_ptr<IbPacket>;

}  // namespace p2
