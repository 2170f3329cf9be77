/*
 * p2mpi_request.c - requests of the MPI layer: made with an id the engine's
 * messages name them by (RTS, CTS, FIN, write completions), found by it,
 * freed. Depends on p2mpi_core.c.
 */
#define _GNU_SOURCE
#include "p2mpi_request.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- Requests ----------------------------------------------------------------- */

pm_req *pm_req_new(int kind)
{
    pm_req *r = calloc(1, sizeof *r);
    if (!r)
        pm_fatal("out of memory");
    r->kind = kind;
    r->id = ++E.next_id;
    if (E.next_id >= E.reqs_cap) {
        size_t cap = E.reqs_cap ? E.reqs_cap * 2 : 1024;
        pm_req **t = realloc(E.reqs, cap * sizeof *t);
        if (!t)
            pm_fatal("out of memory");
        memset(t + E.reqs_cap, 0, (cap - E.reqs_cap) * sizeof *t);
        E.reqs = t;
        E.reqs_cap = cap;
    }
    E.reqs[r->id] = r;
    return r;
}

pm_req *pm_req_by_id(uint64_t id)
{
    if (id == 0 || id >= E.reqs_cap || !E.reqs[id])
        pm_fatal("a message names request %" PRIu64 ", which does not exist (internal)", id);
    return E.reqs[id];
}

pm_req *pm_req_find(uint64_t id) { return id < E.reqs_cap ? E.reqs[id] : NULL; }

void pm_req_free(pm_req *r)
{
    if (r->hooks)
        r->hooks->release(r);
    E.reqs[r->id] = NULL;
    free(r);
}
