/* emu_hello: every rank reports who it is and what its clock reads before and
 * after a modelled computation. */
#include <stdio.h>

#include "p2.h"

int main(void)
{
    int rank = p2_rank(), size = p2_size();
    if (rank < 0)
        return 1;
    double t0 = p2_wtime();
    p2_compute(1.5e-6);
    double t1 = p2_wtime();
    printf("rank %d of %d: t0 %.6f us, after 1.5 us of compute %.6f us\n", rank, size, t0 * 1e6,
           t1 * 1e6);
    return 0;
}
