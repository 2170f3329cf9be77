/*
 * p2_exchange.c - p2_exchange and p2_exchange_barrier (p2.h): an allgather of a small
 * blob over the interconnect itself, written with the TCA API, so ranks
 * started without MPI can swap tcaHandles (and the exchange's cost is the
 * modelled cost of real PIO traffic; the same code would run on boards).
 *
 * Every node's mailbox (p2_mailbox.h) lies at host offset 0, reserved by
 * tcaInit, so its PCIe address is known on every node before anything has
 * been exchanged. Exchange number g (1, 2, ...) uses bank g % 2:
 *
 *   rank r, for every node n:  PIO  blob            -> node n, bank g%2, slot r, +0
 *                              PIO  [node(r), g]    -> node n, bank g%2, slot r, trailer
 *   commit
 *   for every rank q:          wait own mailbox, bank g%2, slot q, generation word == g
 *                              copy the blob out
 *
 * The trailer words sit at a fixed place at the end of the slot, so the
 * generation word's place never holds blob bytes of an exchange of another
 * size. Both writes go through one PIO stream along one fixed path: posted
 * writes arrive in order, so a generation word that reads g means the blob
 * of generation g has landed too.
 *
 * A rank does not know which nodes the others run on until it has heard from
 * them, so the first exchange writes to every node of the cluster (writes to a
 * node without a rank land in memory nobody reads). Each slot also carries
 * its writer's node, and later exchanges write only to the nodes with ranks.
 *
 * Sub-clusters. A topology may cable several PEACH2 networks that no cable
 * joins (HA-PACS/TCA's four 2x8 tori, every node on InfiniBand); which
 * network each rank's node is on the job says (p2_subcluster).
 * tca_exchange_subcluster runs the exchange among the ranks of this rank's
 * network only: "every node of the cluster" above is then every node of the
 * network. p2_exchange on a job spanning several networks crosses them over
 * InfiniBand, where PIO cannot reach (generation g, bank g%2 as above; the
 * far mailbox's bank counts these crossings only, f%2):
 *
 *   every rank:  PIO its slot to its network's nodes (as above)
 *   the leader of each network (its lowest rank), once its network's slots
 *   have arrived in its mailbox: RDMA write them (a run of consecutive ranks
 *   at a time) to the far mailbox of every node of the other networks
 *   (p2_exchange_ib.c), bank f%2
 *   every rank:  wait for its network's slots in its mailbox and the others'
 *                in its far mailbox, copy the blobs out
 *
 * The two-bank argument holds for the far mailbox too. A leader writes a
 * node's far bank f%2 for crossing f+2 only after finishing crossing f+1,
 * which needed that node's rank's slot of f+1, posted after it had finished
 * crossing f and its reads of far bank f%2. The far banks count crossings,
 * not generations: between two crossings the networks may run sub-cluster
 * exchanges, which tell a leader nothing of the other networks' ranks.
 *
 * Why two banks are enough. A rank writes bank g%2 again only for
 * generation g+2, which it starts after finishing g+1, that is after it has
 * seen the generation-(g+1) word of every rank q in its own mailbox. Rank q
 * wrote that word only after finishing generation g, which means after it had
 * copied every generation-g blob out of its own bank g%2. So no write of
 * generation g+2 can reach a bank g%2 whose owner still has to read
 * generation g, while generation g+1, the only one a rank can run ahead to,
 * goes to the other bank. And since each waiter waits for the exact value g,
 * the g-2 still in a slot it has not been sent yet is never taken for g. One
 * bank would not do: a rank that has finished g could overwrite a slot of a
 * slower rank that has not read g yet.
 *
 * All ranks call p2_exchange the same number of times with the same `bytes`
 * (a collective). A rank that passes other `bytes` would hand the others
 * blobs cut short or padded with stale bytes: the node word carries each
 * writer's `bytes` in its upper half (the trailer is written anyway, so a
 * correct exchange takes the time it took), and every rank, having seen
 * every slot, returns TCA_ERROR_INVALID_ARGUMENT when they differ, the
 * lowest rank saying which ranks passed what. Not thread safe.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "p2.h"
#include "p2_mailbox.h"
#include "rt/rt.h"
#include "tca_internal.h"

/* Where the trailer words of a slot sit. */
#define MAILBOX_NODE_WORD (P2_MAILBOX_SLOT_BYTES - 2u * P2_MAILBOX_WORD_BYTES)
#define MAILBOX_GENERATION_WORD (P2_MAILBOX_SLOT_BYTES - P2_MAILBOX_WORD_BYTES)
#define MAILBOX_TRAILER_BYTES (2u * P2_MAILBOX_WORD_BYTES)
/* The node word: the writer's node below, its `bytes` above. */
#define NODE_WORD(node, bytes) ((uint64_t)(node) | (uint64_t)(bytes) << 32)
#define NODE_OF(word) ((word) & 0xffffffffu)
#define BYTES_OF(word) ((word) >> 32)

P2_STATIC_ASSERT(MAILBOX_NODE_WORD == P2_EXCHANGE_MAX_BLOB, "the trailer follows the blob");

/* The handle of node `node`'s mailbox: known without any exchange because it
 * lies at the same host offset on every node. */
static tcaHandle mailbox_handle(unsigned node)
{
    return tca_handle_make(p2_node_base(node) + P2_HOST_OFFSET + P2_MAILBOX_HOST_OFFSET,
                           P2_EXCHANGE_BYTES, tcaMemoryCPU, node);
}

/* Writes [blob, trailer] into slot `rank` of `bank` on node `node`. */
static tcaresult post_slot(unsigned node, unsigned bank, unsigned rank, const void *blob,
                           size_t bytes, const uint64_t trailer[2])
{
    tcaHandle mailbox = mailbox_handle(node);
    tcaPIOHandle pio;
    tcaresult r;
    if ((r = tcaSetPIORegion(&pio, &mailbox, p2_mailbox_slot_offset(bank, rank),
                             P2_MAILBOX_SLOT_BYTES)) != TCA_SUCCESS ||
        (r = tcaSendPIO(&pio, 0, blob, bytes)) != TCA_SUCCESS)
        return r;
    /* Same stream, after the blob: the generation word lands last. */
    return tcaSendPIO(&pio, MAILBOX_NODE_WORD, trailer, MAILBOX_TRAILER_BYTES);
}

/* Rank r's blob and trailer in this node's mailbox. */
static const uint8_t *own_slot(const p2_dev *dev, unsigned bank, unsigned rank)
{
    return dev->host_mem + P2_MAILBOX_HOST_OFFSET + p2_mailbox_slot_offset(bank, rank);
}

/* Whether node `node` is on this node's PEACH2 network. */
static int same_network(const p2_dev *dev, unsigned node)
{
    return !dev->network || dev->network[node] == dev->network[dev->node];
}

/* Phase 1: this rank's blob and trailer to every node that may hold one of
 * `members` (on the first exchange: every node of this PEACH2 network),
 * starting after our own node so that ranks do not all queue on node 0
 * first; then the commit. */
static tcaresult post_own(p2_dev *dev, const unsigned *members, unsigned count, unsigned bank,
                          const void *mine, size_t bytes, const uint64_t trailer[2])
{
    tcaresult r;
    const tca_exchange_state *st = &tca_g.exchange;
    uint8_t target[P2_MAX_NODES] = {0};
    for (unsigned i = 0; i < count; i++)
        if (st->nodes_known)
            target[st->rank_node[members[i]]] = 1;
    for (unsigned k = 0; k < dev->nnodes; k++) {
        unsigned node = (dev->node + 1 + k) % dev->nnodes;
        if ((st->nodes_known && !target[node]) || !same_network(dev, node))
            continue;
        if ((r = post_slot(node, bank, (unsigned)dev->rank, mine, bytes, trailer)) != TCA_SUCCESS)
            return r;
    }
    return tcaSendPIOCommit();
}

/* After the first exchange: the nodes of `members`, from their slots' node
 * words, so that later exchanges write only to them. */
static void note_nodes(const p2_dev *dev, const unsigned *members, unsigned count, unsigned bank)
{
    tca_exchange_state *st = &tca_g.exchange;
    if (st->nodes_known)
        return;
    uint32_t node_of[P2_MAX_NODES];
    for (unsigned i = 0; i < count; i++) {
        uint64_t node;
        memcpy(&node, own_slot(dev, bank, members[i]) + MAILBOX_NODE_WORD, sizeof node);
        node = NODE_OF(node);
        if (node >= dev->nnodes || !same_network(dev, (unsigned)node))
            return; /* never expected; keep writing to every node */
        node_of[members[i]] = (uint32_t)node;
    }
    for (unsigned i = 0; i < count; i++)
        st->rank_node[members[i]] = node_of[members[i]];
    st->nodes_known = 1;
}

/* Whether every rank's slot (slot_of(q): NULL for a rank not in this
 * exchange) says it passed `bytes`; if not, the lowest rank of the exchange
 * prints which ranks passed what (in runs of consecutive ranks). */
static int sizes_agree(const uint8_t *const *slot_of, unsigned size, size_t bytes)
{
    uint64_t got[P2_MAX_NODES];
    int agree = 1, first = -1;
    for (unsigned q = 0; q < size; q++) {
        if (!slot_of[q])
            continue;
        uint64_t w;
        memcpy(&w, slot_of[q] + MAILBOX_NODE_WORD, sizeof w);
        got[q] = BYTES_OF(w);
        agree &= got[q] == bytes;
        if (first < 0)
            first = (int)q;
    }
    if (agree || first != (int)tca_dev()->rank)
        return agree;
    char msg[1024];
    size_t len = (size_t)snprintf(msg, sizeof msg, "p2_exchange: the ranks' sizes differ:");
    uint8_t said[P2_MAX_NODES] = {0};
    for (unsigned q = 0; q < size; q++) {
        if (!slot_of[q] || said[q])
            continue;
        unsigned same = 0;
        for (unsigned a = q; a < size; a++)
            same += slot_of[a] && got[a] == got[q];
        len += (size_t)snprintf(msg + len, len < sizeof msg ? sizeof msg - len : 0,
                                "%s %llu bytes at rank%s", q == (unsigned)first ? "" : ";",
                                (unsigned long long)got[q], same > 1 ? "s" : "");
        const char *sep = " ";
        for (unsigned a = q; a < size; a++) {
            if (!slot_of[a] || said[a] || got[a] != got[q])
                continue;
            unsigned b = a;
            while (b + 1 < size && slot_of[b + 1] && got[b + 1] == got[q])
                b++;
            for (unsigned k = a; k <= b; k++)
                said[k] = 1;
            len += (size_t)(b > a ? snprintf(msg + len, len < sizeof msg ? sizeof msg - len : 0,
                                             "%s%u-%u", sep, a, b)
                                  : snprintf(msg + len, len < sizeof msg ? sizeof msg - len : 0,
                                             "%s%u", sep, a));
            sep = ",";
            a = b;
        }
    }
    fprintf(stderr, "%s (TCA_ERROR_INVALID_ARGUMENT)\n", msg);
    return 0;
}

/* The exchange among `members` (job ranks in increasing order, this one
 * among them): all[i * bytes] = members[i]'s blob. Every member calls it the
 * same number of times with the same members (the job's ranks, or those of
 * one sub-cluster), as every rank calls the crossings (below) alike. */
static tcaresult exchange_among(p2_dev *dev, const unsigned *members, unsigned count,
                                const void *mine, void *all, size_t bytes)
{
    tcaresult r;
    tca_exchange_state *st = &tca_g.exchange;
    const uint64_t generation = st->generation + 1;
    const unsigned bank = (unsigned)(generation % P2_MAILBOX_BANKS);
    const uint64_t trailer[2] = {NODE_WORD(dev->node, bytes), generation};
    if ((r = post_own(dev, members, count, bank, mine, bytes, trailer)) != TCA_SUCCESS)
        return r;

    /* Phase 2: every member's slot in our own mailbox, in rank order. */
    for (unsigned i = 0; i < count; i++) {
        const uint8_t *slot = own_slot(dev, bank, members[i]);
        if ((r = p2_wait_u64((const volatile uint64_t *)(slot + MAILBOX_GENERATION_WORD),
                             generation)) != TCA_SUCCESS)
            return r;
    }
    /* The blobs landed before their generation words (see the top). */
    atomic_thread_fence(memory_order_acquire);
    const uint8_t *slot_of[P2_MAX_NODES] = {0};
    for (unsigned i = 0; i < count; i++)
        slot_of[members[i]] = own_slot(dev, bank, members[i]);
    /* Every member has finished its part either way: the next exchange
     * starts from the same generation everywhere. */
    note_nodes(dev, members, count, bank);
    st->generation = generation;
    if (!sizes_agree(slot_of, (unsigned)dev->size, bytes))
        return TCA_ERROR_INVALID_ARGUMENT;
    for (unsigned i = 0; i < count; i++)
        memcpy((uint8_t *)all + (size_t)i * bytes, own_slot(dev, bank, members[i]), bytes);
    return TCA_SUCCESS;
}

/* ---- Across PEACH2 networks ------------------------------------------------ */

/* The next run of consecutive ranks q >= *from with in[q] set: [*a, *b].
 * 0 when there is none. */
static int next_run(const uint8_t *in, unsigned size, unsigned *from, unsigned *a, unsigned *b)
{
    unsigned q = *from;
    while (q < size && !in[q])
        q++;
    if (q >= size)
        return 0;
    *a = q;
    while (q + 1 < size && in[q + 1])
        q++;
    *b = q;
    *from = q + 1;
    return 1;
}

/* Every rank's slot of `bank` in `mailbox` (a slot-addressing function),
 * for the ranks with want[q] set, until its generation word reads g. */
static tcaresult wait_slots(const uint8_t *(*slot)(const p2_dev *, unsigned, unsigned),
                            const p2_dev *dev, unsigned bank, const uint8_t *want, unsigned size,
                            uint64_t g)
{
    tcaresult r;
    for (unsigned q = 0; q < size; q++)
        if (want[q] &&
            (r = p2_wait_u64((const volatile uint64_t *)(slot(dev, bank, q) + MAILBOX_GENERATION_WORD),
                             g)) != TCA_SUCCESS)
            return r;
    return TCA_SUCCESS;
}

static const uint8_t *far_slot(const p2_dev *dev, unsigned bank, unsigned rank)
{
    (void)dev;
    return tca_xib_slot(bank, rank);
}

/* The leader's part of a crossing: its network's slots (`mine`), once they
 * have arrived, to the far mailbox of every node of the other networks. */
static tcaresult lead_crossing(p2_dev *dev, const uint8_t *mine, const uint32_t *node_of,
                               unsigned bank, unsigned far_bank, uint64_t generation)
{
    const unsigned size = (unsigned)dev->size;
    tcaresult r;
    if ((r = wait_slots(own_slot, dev, bank, mine, size, generation)) != TCA_SUCCESS)
        return r;
    for (unsigned q = 0; q < size; q++) {
        if (mine[q])
            continue;
        unsigned from = 0, a, b;
        while (next_run(mine, size, &from, &a, &b))
            if ((r = tca_xib_write(node_of[q], own_slot(dev, bank, a),
                                   p2_mailbox_slot_offset(far_bank, a),
                                   (b - a + 1) * P2_MAILBOX_SLOT_BYTES)) != TCA_SUCCESS)
                return r;
    }
    return TCA_SUCCESS;
}

/* p2_exchange on a job whose ranks are on several PEACH2 networks
 * (`members`: this rank's network's). */
static tcaresult exchange_across(p2_dev *dev, const unsigned *members, unsigned count,
                                 const void *blob, void *all, size_t bytes)
{
    char why[160];
    const int leader = members[0] == (unsigned)dev->rank;
    tcaresult r = tca_xib_open(leader, why, sizeof why);
    if (r != TCA_SUCCESS) {
        if (r == TCA_ERROR_UNREACHABLE && dev->rank == 0)
            fprintf(stderr, "p2_exchange: the job's ranks are on several PEACH2 networks "
                            "(sub-clusters), which no cable joins, and %s: "
                            "TCA_ERROR_UNREACHABLE (exchange handles with MPI, or among a "
                            "sub-cluster's ranks with P2_COMM_SUBCLUSTER's collectives; "
                            "p2_subcluster() says where each rank is)\n", why);
        return r;
    }
    tca_exchange_state *st = &tca_g.exchange;
    const uint64_t generation = st->generation + 1;
    const unsigned bank = (unsigned)(generation % P2_MAILBOX_BANKS);
    const unsigned far_bank = (unsigned)((st->across + 1) % P2_MAILBOX_BANKS);
    const unsigned size = (unsigned)dev->size;
    uint32_t node_of[P2_MAX_NODES];
    uint8_t mine[P2_MAX_NODES] = {0}, foreign[P2_MAX_NODES];
    for (unsigned i = 0; i < count; i++)
        mine[members[i]] = 1;
    for (unsigned q = 0; q < size; q++) {
        node_of[q] = (uint32_t)p2_rt_rank_node(p2_rt_get(), (int)q);
        foreign[q] = !mine[q];
    }
    const uint64_t trailer[2] = {NODE_WORD(dev->node, bytes), generation};
    if ((r = post_own(dev, members, count, bank, blob, bytes, trailer)) != TCA_SUCCESS ||
        (leader && (r = lead_crossing(dev, mine, node_of, bank, far_bank, generation)) !=
                       TCA_SUCCESS) ||
        (r = wait_slots(own_slot, dev, bank, mine, size, generation)) != TCA_SUCCESS ||
        (r = wait_slots(far_slot, dev, far_bank, foreign, size, generation)) != TCA_SUCCESS ||
        (leader && (r = tca_xib_drain()) != TCA_SUCCESS))
        return r;
    /* The blobs landed before their generation words (see the top). */
    atomic_thread_fence(memory_order_acquire);
    const uint8_t *slot_of[P2_MAX_NODES] = {0};
    for (unsigned q = 0; q < size; q++)
        slot_of[q] = mine[q] ? own_slot(dev, bank, q) : far_slot(dev, far_bank, q);
    note_nodes(dev, members, count, bank);
    st->generation = generation;
    st->across++;
    if (!sizes_agree(slot_of, size, bytes))
        return TCA_ERROR_INVALID_ARGUMENT;
    for (unsigned q = 0; q < size; q++)
        memcpy((uint8_t *)all + (size_t)q * bytes, slot_of[q], bytes);
    return TCA_SUCCESS;
}

/* tcaInit, the arguments, and the job's ranks on this rank's PEACH2
 * network (*count of them; *spans: the job has ranks on others too). */
static tcaresult exchange_setup(const void *mine, const void *all, size_t bytes, p2_dev **out,
                                unsigned *members, unsigned *count, int *spans)
{
    tcaresult r = tcaInit();
    if (r != TCA_SUCCESS)
        return r;
    p2_dev *dev = tca_dev();
    if (!mine || !all || bytes == 0 || bytes > P2_EXCHANGE_MAX_BLOB)
        return TCA_ERROR_INVALID_ARGUMENT;
    if (dev->rank < 0 || dev->size <= 0 || dev->size > P2_MAX_NODES || dev->rank >= dev->size)
        return TCA_ERROR_DEVICE;
    *count = 0;
    *spans = 0;
    for (int q = 0; q < dev->size; q++) {
        if (!dev->network) { /* one network (a device without the job's map) */
            members[(*count)++] = (unsigned)q;
            continue;
        }
        int node = p2_rt_rank_node(p2_rt_get(), q);
        if (node < 0 || (unsigned)node >= dev->nnodes)
            return TCA_ERROR_DEVICE;
        if (same_network(dev, (unsigned)node))
            members[(*count)++] = (unsigned)q;
        else
            *spans = 1;
    }
    *out = dev;
    return TCA_SUCCESS;
}

tcaresult p2_exchange(const void *mine, void *all, size_t bytes)
{
    P2_API_CALL();
    p2_dev *dev;
    unsigned members[P2_MAX_NODES], count;
    int spans;
    tcaresult r = exchange_setup(mine, all, bytes, &dev, members, &count, &spans);
    if (r != TCA_SUCCESS)
        return r;
    return spans ? exchange_across(dev, members, count, mine, all, bytes)
                 : exchange_among(dev, members, count, mine, all, bytes);
}

tcaresult tca_exchange_subcluster(const void *mine, void *all, size_t bytes)
{
    P2_API_CALL();
    p2_dev *dev;
    unsigned members[P2_MAX_NODES], count;
    int spans;
    tcaresult r = exchange_setup(mine, all, bytes, &dev, members, &count, &spans);
    return r != TCA_SUCCESS ? r : exchange_among(dev, members, count, mine, all, bytes);
}

tcaresult p2_exchange_barrier(void)
{
    P2_API_CALL();
    /* Any 8 bytes will do: the exchange returns only once every rank has
     * posted its slot, i.e. has entered the barrier. */
    uint64_t token = 0, tokens[P2_MAX_NODES];
    return p2_exchange(&token, tokens, sizeof token);
}
