/*
 * barrier_dissemination.c - barrier by dissemination (Hensgen, Finkel and
 * Manber): ceil(log2 p) steps; at step k every rank signals rank + 2^k and
 * waits for the signal of rank - 2^k. A signal is one 8-byte PIO store of
 * the barrier's sequence number into a flag word of the peer's mailbox
 * (bank seq % 2, word k), the cheapest message the board carries (1.0 us).
 *
 *   p = 5:   step 0 (+1)      step 1 (+2)       step 2 (+4)
 *            0->1 1->2 ...    0->2 1->3 ...     0->4 1->0 ...
 *
 * After step k a rank has heard, directly or not, from the 2^(k+1) ranks
 * before it; after the last step from all of them.
 *
 * Two banks are enough: a rank writes bank b again only at barrier seq+2,
 * which it enters after leaving seq+1, which no rank leaves before every rank
 * has entered it, that is has left barrier seq (and read its flags).
 */
#include "coll.h"

static int eligible(const coll_plan *p)
{
    return coll_ceil_log2(p->size) <= COLL_BARRIER_STEPS;
}

static double cost(int size, size_t bytes, int gpu)
{
    (void)bytes, (void)gpu;
    return coll_ceil_log2(size) * coll_cost.pio_latency_s;
}

static size_t scratch(const coll_plan *p)
{
    (void)p;
    return 0;
}

static tcaresult run(coll_plan *p)
{
    uint64_t seq = p->dry ? 0 : ++p->comm->barrier_seq;
    /* Phase 1..K: signal rank + 2^k, wait for rank - 2^k. */
    for (int k = 0; (1 << k) < p->size; k++) {
        COLL_TRY(coll_barrier_signal(p, coll_mod(p->rank + (1 << k), p->size), k, seq));
        COLL_TRY(coll_barrier_wait(p, k, seq));
    }
    return TCA_SUCCESS;
}

const coll_algorithm coll_barrier_dissemination = {COLL_BARRIER, "dissemination", eligible,
                                                   cost, scratch, run, 0, 0};
