/*
 * coll_plan.h - a plan's life (coll_plan.c: prepare, run, point at other
 * buffers, release), for the blocking and the persistent calls, and the
 * blocking calls' plan cache that a freed communicator empties.
 */
#ifndef P2_COLL_PLAN_H
#define P2_COLL_PLAN_H

#include "coll.h"

/* Prepares a plan of `kind` on `comm`: local checks, the algorithm, scratch,
 * the exchange every rank agrees through. `persistent`: for a p2_*_init
 * (only named in messages). On failure the plan holds nothing. */
tcaresult coll_plan_prepare(coll_plan *p, coll_kind kind, const void *sendbuf, void *recvbuf,
                            size_t count, tcaDataType type, tcaOp op, int root, p2_comm_t comm,
                            int persistent);
/* One run of a prepared plan. `after_exchange`: right after the preparing
 * exchange (no rank can still be in an earlier run). */
tcaresult coll_plan_run(coll_plan *p, int after_exchange);
/* Points a plan at other buffers of the same kind (new local handles, which
 * the next ready tokens announce); on failure the plan keeps its own. */
tcaresult coll_plan_rebind(coll_plan *p, const void *sendbuf, void *recvbuf);
/* Frees the plan's handles, scratch and peers; the plan is zeroed. */
void coll_plan_release(coll_plan *p);
/* The collective has a root (bcast, scatter, gather, reduce). */
int coll_rooted(coll_kind k);

#endif /* P2_COLL_PLAN_H */
