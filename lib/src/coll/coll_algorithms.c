/*
 * coll_algorithms.c - the algorithm table: every collective's algorithms by
 * name (one file each, <collective>_<algorithm>.c), looked up by name (the
 * environment variable, the rules file) and by what can run a plan.
 *
 * Depends on the algorithms' descriptors alone; the cost model, the rules
 * and the choice use it.
 */
#include <string.h>

#include "coll.h"

const coll_algorithm *const coll_algorithms[] = {
    &coll_barrier_dissemination,       &coll_bcast_binomial,
    &coll_scatter_linear,              &coll_gather_linear,
    &coll_reduce_gather,               &coll_reduce_gather_gpu,
    &coll_allgather_recursive_doubling,
    &coll_allgather_bruck,             &coll_allgather_ring,
    &coll_allreduce_dissemination_pio, &coll_allreduce_dissemination,
    &coll_allreduce_rsag,
};
const size_t coll_algorithm_count = sizeof coll_algorithms / sizeof coll_algorithms[0];

const coll_algorithm *coll_algorithm_find(coll_kind kind, const char *name)
{
    for (size_t i = 0; i < coll_algorithm_count; i++)
        if (coll_algorithms[i]->kind == kind && strcmp(coll_algorithms[i]->name, name) == 0)
            return coll_algorithms[i];
    return NULL;
}

uint32_t coll_eligible_mask(const coll_plan *p)
{
    uint32_t mask = 0;
    for (size_t i = 0; i < coll_algorithm_count; i++)
        if (coll_algorithms[i]->kind == p->kind && coll_algorithms[i]->eligible(p))
            mask |= 1u << i;
    return mask;
}

