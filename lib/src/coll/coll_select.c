/*
 * coll_select.c - which algorithm a collective runs:
 *
 *   1. P2_COLL_<COLLECTIVE>=<algorithm> (e.g. P2_COLL_ALLREDUCE=rsag) forces
 *      one; not eligible for the call (or unknown): TCA_ERROR_NOT_SUPPORTED.
 *   2. P2_COLL_RULES=<file>: the first rule matching the collective, the
 *      communicator size and the bytes per rank names the algorithm (an
 *      ineligible one is skipped); coll_rules.c reads the file and says its
 *      format. A bad file: TCA_ERROR_INVALID_ARGUMENT from every collective.
 *   3. Otherwise the eligible algorithm with the lowest predicted time
 *      (the first listed on a tie): each algorithm's cost, from the cost
 *      model's figures and cable sharing (coll_cost.c).
 *
 * Depends on the algorithm table (coll_algorithms.c), the rules
 * (coll_rules.c) and the cost model (coll_cost.c); none of them on it.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "coll_rules.h"

static void forced_var(coll_kind kind, char *var, size_t size)
{
    snprintf(var, size, "P2_COLL_%s", coll_kind_names[kind]);
    for (char *c = var; *c; c++)
        *c = (char)toupper((unsigned char)*c);
}

static const char *forced_env(coll_kind kind)
{
    char var[64];
    forced_var(kind, var, sizeof var);
    return getenv(var);
}

/* A forced algorithm that cannot be used: NOT_SUPPORTED alone would not
 * say which variable, nor what it may name. */
static void report_forced(const coll_plan *p, const char *name, int known)
{
    char var[64], list[256] = "";
    forced_var(p->kind, var, sizeof var);
    for (size_t i = 0; i < coll_algorithm_count; i++)
        if (coll_algorithms[i]->kind == p->kind)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", *list ? ", " : "",
                     coll_algorithms[i]->name);
    if (known)
        fprintf(stderr, "p2coll: %s=%s cannot run this call (count %zu, %d ranks, %s buffers); "
                        "%s algorithms: %s\n",
                var, name, p->count, p->size, p->send.gpu || p->recv.gpu ? "GPU" : "host",
                coll_kind_names[p->kind], list);
    else
        fprintf(stderr, "p2coll: %s=%s: no such %s algorithm (%s)\n", var, name,
                coll_kind_names[p->kind], list);
}

void coll_forced_name(coll_kind kind, char *out, size_t size)
{
    const char *f = forced_env(kind);
    snprintf(out, size, "%s", f ? f : "");
}

tcaresult coll_select(coll_plan *p)
{
    /* 1. The environment variable. */
    const char *forced = forced_env(p->kind);
    if (forced && *forced) {
        const coll_algorithm *a = coll_algorithm_find(p->kind, forced);
        if (!a || !a->eligible(p)) {
            report_forced(p, forced, a != NULL);
            return TCA_ERROR_NOT_SUPPORTED;
        }
        p->algo = a;
        p->forced = 1;
        return TCA_SUCCESS;
    }
    /* 2. The rules file. */
    const coll_algorithm *ruled = NULL;
    COLL_TRY(coll_rules_find(p, &ruled));
    if (ruled) {
        p->algo = ruled;
        p->forced = 1;
        return TCA_SUCCESS;
    }
    /* 3. The cost model. */
    p->algo = coll_cheapest(p, coll_eligible_mask(p), p->send.gpu || p->recv.gpu);
    return p->algo ? TCA_SUCCESS : TCA_ERROR_NOT_SUPPORTED;
}

const coll_algorithm *coll_cheapest(const coll_plan *p, uint32_t mask, int gpu)
{
    const coll_algorithm *best = NULL;
    double best_s = 0;
    coll_share_comm(p->comm);
    for (size_t i = 0; i < coll_algorithm_count; i++) {
        if (!(mask >> i & 1) || coll_algorithms[i]->kind != p->kind)
            continue;
        double t = coll_algorithms[i]->cost(p->size, p->bytes, gpu);
        if (!best || t < best_s) {
            best_s = t;
            best = coll_algorithms[i];
        }
    }
    return best;
}
