/*
 * fmpl_init.c - fmpl_init: FMPL's setup in this process (fmpl_core.c), then
 * the barrier every rank passes once its areas are mapped (fmpl_sync.c) and
 * the ranks' agreement on count (fmpl_allreduce, fmpl_coll.c). The top unit
 * of FMPL: it uses the others, none uses it.
 */
#include <stdio.h>

#include "fmpl/fmpl_sync.h"

void fmpl_init(fmpl_match_t *ma, fmpl_flag_t *fa, int count, int *ier)
{
    int dummy;
    if (!ier)
        ier = &dummy;
    FMPL_BEGIN();
    if (!fmpl_setup(ma, fa, count, ier))
        goto out;
    /* Every rank's areas are mapped before anyone sends. */
    *ier = fmpl_g.hw_ok ? fmpl_hw_barrier() : fmpl_sw_barrier(&fmpl_g.comm[0], 0);
    if (*ier == FMPL_SUCCESS) {
        /* Slots are addressed by count: every rank must pass the same one,
         * else sends would land in the wrong slots. Largest and smallest
         * count (max |x| of count and of C - count) over the job. */
        const int32_t c = INT32_MAX / 2;
        int32_t *v = fmpl_malloc(4 * sizeof(int32_t));
        if (!v) {
            *ier = FMPL_ERR_NO_MEMORY;
        } else {
            v[0] = count;
            v[1] = c - count;
            fmpl_allreduce(v, 2, fmpl_imax, FMPL_COMM_WORLD, v + 2, ier);
            if (*ier == FMPL_SUCCESS && v[0] != c - v[1]) {
                fprintf(stderr, "fmpl_init: rank %d: the ranks passed different counts (%d to %d)\n",
                        fmpl_g.rank, (int)(c - v[1]), (int)v[0]);
                *ier = FMPL_ERR_ARG;
            }
            fmpl_free(v);
        }
    }
    if (*ier != FMPL_SUCCESS)
        fmpl_g.init = 0;
out:
    FMPL_END();
}
