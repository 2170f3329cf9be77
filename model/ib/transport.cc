#include "ib/transport.h"

namespace p2 {

bool ib_local_ok(const IbConfig& c, unsigned node, uint64_t addr, uint64_t len) {
  if (p2_addr_node(addr) != node) return false;
  const uint64_t off = p2_addr_offset(addr);
  switch (p2_addr_window(addr)) {
    case P2_WIN_HOST: return off - P2_HOST_OFFSET <= c.host_memory_bytes &&
                             len <= c.host_memory_bytes - (off - P2_HOST_OFFSET);
    case P2_WIN_GPU: return off - P2_GPU_OFFSET <= c.gpu_memory_bytes &&
                            len <= c.gpu_memory_bytes - (off - P2_GPU_OFFSET);
    default: return false;
  }
}

bool ib_is_atomic(uint8_t op) { return op == IB_OP_ATOMIC_FETCH_ADD || op == IB_OP_ATOMIC_CMP_SWAP; }

bool ib_is_read_or_atomic(uint8_t op) { return op == IB_OP_RDMA_READ || ib_is_atomic(op); }

uint8_t ib_check_wqe(const IbConfig& c, unsigned node, unsigned nodes, const ib_wqe& w) {
  const bool atomic = ib_is_atomic(w.opcode);
  const bool rdma = w.opcode == IB_OP_RDMA_WRITE || w.opcode == IB_OP_RDMA_WRITE_IMM || ib_is_read_or_atomic(w.opcode);
  if ((w.opcode != IB_OP_SEND && !rdma) || (w.flags & ~IB_WQE_FLAGS_ALL) ||
      (w.rail >= IB_PORTS && w.rail != IB_RAIL_ANY) || w.length > IB_MAX_MESSAGE ||
      (w.length && !ib_local_ok(c, node, w.local_addr, w.length)) ||
      (atomic && (w.length != IB_ATOMIC_BYTES || w.local_addr % IB_ATOMIC_BYTES)))
    return IB_ERR_LOCAL;
  if (w.dest_node >= nodes) return IB_ERR_DEST;
  if (rdma && w.length) {
    // Every node exposes the same memory sizes: the sender checks the target
    // before any byte moves, as PEACH2's DMAC does.
    const uint64_t a = w.remote_addr;
    const uint64_t local_equiv = a - p2_node_base(p2_addr_node(a)) + p2_node_base(node);
    if (p2_addr_node(a) != w.dest_node || !ib_local_ok(c, node, local_equiv, w.length) ||
        (atomic && a % IB_ATOMIC_BYTES))
      return IB_ERR_REMOTE;
  }
  return IB_OK;
}

std::vector<IbPart> ib_plan_parts(const IbConfig& c, const ib_wqe& w, unsigned& next_rail) {
  std::vector<IbPart> parts;
  const uint32_t mtu = c.mtu;
  if (w.rail != IB_RAIL_ANY) {
    parts.push_back({w.rail, 0, w.length});
  } else if ((w.opcode == IB_OP_RDMA_WRITE || w.opcode == IB_OP_RDMA_READ) && c.rail_policy == 1 &&
             w.length >= c.stripe_min_bytes && w.length > mtu) {
    const uint32_t half = (w.length / 2 + mtu - 1) / mtu * mtu;
    parts.push_back({0, 0, half});
    parts.push_back({1, half, w.length - half});
  } else {
    parts.push_back({next_rail, 0, w.length});
    next_rail = (next_rail + 1) % IB_PORTS;
  }
  return parts;
}

uint64_t ib_atomic_result(uint8_t opcode, uint64_t old, uint64_t compare_add, uint64_t swap) {
  if (opcode == IB_OP_ATOMIC_FETCH_ADD) return old + compare_add;
  return old == compare_add ? swap : old;
}

}  // namespace p2
