/* rk_ib: two ranks drive their nodes' InfiniBand HCAs through the device seam
 * (p2_device_get("ib"), ib_hw.h), the way an MPI layer would: an eager SEND
 * into a pre-posted receive buffer; a rendezvous (a striped RDMA write, its
 * send completion, then a SEND as FIN: the FIN may not overtake the data on
 * the other rail, so it waits for the write's acknowledgement); and an RDMA
 * write with immediate. Every byte and every completion entry is checked.
 * Run with p2run -n 2 --topology topologies/hapacs-tca-2x8-ib.topo. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dev/dev.h"
#include "ib_hw.h"
#include "p2.h"

#define SQ 0x4000000ULL /* 64 MiB into registered host memory */
#define RQ 0x4010000ULL
#define CQ 0x4020000ULL
#define ENTRIES 64
#define EAGER_SRC 0x4100000ULL
#define EAGER_DST 0x4200000ULL
#define EAGER_LEN 4000u
#define RNDV_SRC 0x5000000ULL
#define RNDV_DST 0x6000000ULL
#define RNDV_LEN (1u << 20)
#define IMM_DST 0x7000000ULL
#define IMM_LEN 100u

static p2_dev *dev;
static uint64_t posted, rposted, seen;

static uint64_t bus(uint64_t off) { return p2_node_base(dev->node) + P2_HOST_OFFSET + off; }
static uint64_t peer_bus(unsigned node, uint64_t off) { return p2_node_base(node) + P2_HOST_OFFSET + off; }
static void reg(uint64_t r, uint64_t v) { dev->ops->mmio_write(dev, IB_BAR_REGS, r, v); }

static void fill(uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)((i * 131 + seed * 7 + (i >> 8)) & 0xff);
}

static int check(const uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (uint8_t)((i * 131 + seed * 7 + (i >> 8)) & 0xff))
            return 0;
    return 1;
}

static void post_send(uint8_t op, unsigned dest, uint64_t src, uint32_t len, uint64_t remote,
                      uint32_t imm, uint64_t wr_id)
{
    ib_wqe w;
    memset(&w, 0, sizeof w);
    w.opcode = op;
    w.flags = IB_WQE_SIGNALED;
    w.rail = IB_RAIL_ANY;
    w.dest_node = (uint16_t)dest;
    w.length = len;
    w.imm = imm;
    w.local_addr = bus(src);
    w.remote_addr = remote;
    w.wr_id = wr_id;
    memcpy(dev->host_mem + SQ + IB_WQE_SIZE * (posted % ENTRIES), &w, sizeof w);
    reg(IB_REG_SQ_DOORBELL, ++posted);
}

static void post_recv(uint64_t off, uint32_t len, uint64_t wr_id)
{
    ib_rqe e;
    memset(&e, 0, sizeof e);
    e.addr = bus(off);
    e.length = len;
    e.wr_id = wr_id;
    memcpy(dev->host_mem + RQ + IB_RQE_SIZE * (rposted % ENTRIES), &e, sizeof e);
    reg(IB_REG_RQ_DOORBELL, ++rposted);
}

static ib_cqe next_cqe(void)
{
    uint64_t i = seen++;
    volatile uint64_t *word = (volatile uint64_t *)(dev->host_mem + CQ + IB_CQE_SIZE * (i % ENTRIES));
    if (dev->ops->wait_mem(dev, word, IB_CQE_SERIAL_MASK, (uint64_t)ib_cqe_serial(i) << 32, 1) !=
        P2_WAIT_OK) {
        fprintf(stderr, "rank %d: wait for CQ entry %" PRIu64 " failed\n", dev->rank, i);
        _exit(2);
    }
    ib_cqe e;
    memcpy(&e, (const void *)word, sizeof e);
    reg(IB_REG_CQ_TAIL, seen);
    return e;
}

#define EXPECT(c)                                                                   \
    do {                                                                            \
        if (!(c)) {                                                                 \
            fprintf(stderr, "rank %d: FAIL %s (line %d)\n", dev->rank, #c, __LINE__); \
            return 1;                                                               \
        }                                                                           \
    } while (0)

int main(void)
{
    dev = p2_device_get("ib");
    if (!dev || dev->size != 2) {
        fprintf(stderr, "rk_ib: run with p2run -n 2 and a topology with `device ib`\n");
        return 1;
    }
    EXPECT(dev->ops->mmio_read(dev, IB_BAR_REGS, IB_REG_HCA_ID) == IB_HCA_ID_VALUE);
    EXPECT(dev->ops->mmio_read(dev, IB_BAR_REGS, IB_REG_NODE_ID) == dev->node);
    memset(dev->host_mem + CQ, 0, IB_CQE_SIZE * ENTRIES);
    reg(IB_REG_SQ_SIZE, ENTRIES);
    reg(IB_REG_SQ_BASE, bus(SQ));
    reg(IB_REG_RQ_SIZE, ENTRIES);
    reg(IB_REG_RQ_BASE, bus(RQ));
    reg(IB_REG_CQ_SIZE, ENTRIES);
    reg(IB_REG_CQ_BASE, bus(CQ));
    /* The peer's node: ranks 0 and 1 may sit on any nodes of the mapping. */
    unsigned peer = 0;
    if (dev->rank == 0) {
        /* Learn the peer's node from its first eager message? Simpler: the
         * identity mapping puts rank r on node r. */
        peer = 1;
        fill(dev->host_mem + EAGER_SRC, EAGER_LEN, 1);
        fill(dev->host_mem + RNDV_SRC, RNDV_LEN, 2);
        double t0 = p2_wtime();
        post_send(IB_OP_SEND, peer, EAGER_SRC, EAGER_LEN, 0, 7, 100);
        ib_cqe e = next_cqe();
        EXPECT(e.kind == IB_CQE_SEND && e.status == IB_OK && e.wr_id == 100);
        double t1 = p2_wtime();
        post_send(IB_OP_RDMA_WRITE, peer, RNDV_SRC, RNDV_LEN, peer_bus(peer, RNDV_DST), 0, 101);
        e = next_cqe();
        EXPECT(e.kind == IB_CQE_RDMA_WRITE && e.status == IB_OK && e.wr_id == 101);
        double t2 = p2_wtime();
        post_send(IB_OP_SEND, peer, EAGER_SRC, 8, 0, 0xF1, 102); /* FIN */
        EXPECT(next_cqe().wr_id == 102);
        post_send(IB_OP_RDMA_WRITE_IMM, peer, RNDV_SRC, IMM_LEN, peer_bus(peer, IMM_DST), 0x1234, 103);
        e = next_cqe();
        EXPECT(e.kind == IB_CQE_RDMA_WRITE && e.status == IB_OK && e.wr_id == 103);
        printf("rank 0: eager %u B acknowledged in %.3f us, RDMA write %u B in %.3f us (%.2f GB/s)\n",
               EAGER_LEN, (t1 - t0) * 1e6, RNDV_LEN, (t2 - t1) * 1e6, RNDV_LEN / ((t2 - t1) * 1e9));
        return 0;
    }
    post_recv(EAGER_DST, 8192, 200);
    post_recv(EAGER_DST + 8192, 64, 201);
    post_recv(EAGER_DST + 16384, 64, 202);
    ib_cqe e = next_cqe();
    EXPECT(e.kind == IB_CQE_RECV && e.status == IB_OK && e.wr_id == 200 && e.byte_len == EAGER_LEN);
    EXPECT(e.src_node == 0 && e.imm == 7 && e.msn == 1);
    EXPECT(check(dev->host_mem + EAGER_DST, EAGER_LEN, 1));
    e = next_cqe(); /* FIN: the rendezvous data is complete */
    EXPECT(e.kind == IB_CQE_RECV && e.wr_id == 201 && e.imm == 0xF1 && e.msn == 3);
    EXPECT(check(dev->host_mem + RNDV_DST, RNDV_LEN, 2));
    e = next_cqe();
    EXPECT(e.kind == IB_CQE_RECV_IMM && e.wr_id == 202 && e.imm == 0x1234 && e.byte_len == IMM_LEN);
    EXPECT(check(dev->host_mem + IMM_DST, IMM_LEN, 2));
    printf("rank 1: eager, rendezvous and write-with-immediate received, all bytes right\n");
    return 0;
}
