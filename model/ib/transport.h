// transport.h - the InfiniBand transport's rules an HCA applies to a work
// request, as functions of the configuration alone: which addresses an HCA
// reaches, a work request's checks before any byte moves, how a message is
// split over the rails, and the atomic unit's operation. Depends on the
// configuration (config.h) and the hardware contract (ib_hw.h); the HCA
// (hca.cc) and its responder (responder.cc) use it.
#pragma once

#include <cstdint>
#include <vector>

#include "ib/config.h"
#include "ib_hw.h"

namespace p2 {

// Whether [addr, addr + len) lies in node's own host or GPU memory.
bool ib_local_ok(const IbConfig& c, unsigned node, uint64_t addr, uint64_t len);

bool ib_is_atomic(uint8_t opcode);
bool ib_is_read_or_atomic(uint8_t opcode);

// The status of work request w at node (of nodes) before any byte moves:
// IB_OK, or the error it completes with at once.
uint8_t ib_check_wqe(const IbConfig& c, unsigned node, unsigned nodes, const ib_wqe& w);

// A message's part on one rail: its bytes [offset, offset + length).
struct IbPart {
  unsigned rail;
  uint32_t offset, length;
};
// The parts of a checked work request: its rail; both rails for a plain
// RDMA write or RDMA read of at least stripe_min_bytes (rail policy 1) with
// IB_RAIL_ANY; else next_rail, which then advances.
std::vector<IbPart> ib_plan_parts(const IbConfig& c, const ib_wqe& w, unsigned& next_rail);

// The atomic unit: the word's new value from its old one (FETCH_ADD adds
// compare_add; CMP_SWAP writes swap when old equals compare_add).
uint64_t ib_atomic_result(uint8_t opcode, uint64_t old, uint64_t compare_add, uint64_t swap);

}  // namespace p2
