/* emu_compute: every rank computes (a fixed integer loop of N iterations,
 * default 20 million) between two reads of its clock, then prints the
 * simulated time the computation took. Under --clock model it takes none
 * (the end-of-job report says how much host CPU time it used); under
 * --clock instructions, its retired instructions at instructions_per_ns.
 *   emu_compute param NAME...   prints each rank parameter as p2_param()
 *                               reads it ("NAME = VALUE"), without p2run too. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2.h"

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "param") == 0) {
        for (int i = 2; i < argc; i++)
            printf("%s = %g\n", argv[i], p2_param(argv[i]));
        return 0;
    }
    long n = argc > 1 ? atol(argv[1]) : 20000000L;
    int rank = p2_rank();
    if (rank < 0 || n < 0)
        return 1;
    volatile unsigned long sum = 0;
    double t0 = p2_wtime();
    for (long i = 0; i < n; i++)
        sum += (unsigned long)i;
    double t1 = p2_wtime();
    printf("rank %d: %ld iterations took %.6f us of simulated time (sum %lu)\n", rank, n,
           (t1 - t0) * 1e6, (unsigned long)sum);
    return 0;
}
