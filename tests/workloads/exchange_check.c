/*
 * exchange_check: p2_exchange and p2_exchange_barrier under p2run. Every rank runs
 * rounds of exchanges of changing sizes (so the two mailbox banks are reused
 * many times, with the generation word's place never holding stale blob
 * bytes), checks every byte it got from every rank, and prints the simulated
 * time of the first exchange (it writes to every node) and of a later one.
 * Exit 0 when all is right, 1 otherwise.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "p2.h"

enum { ROUNDS = 40, MAX_BLOB = 240, MAX_RANKS = 64 };

/* The byte rank `rank` sends at position `i` in round `round`. */
static uint8_t blob_byte(int round, int rank, size_t i)
{
    return (uint8_t)(round * 131 + rank * 17 + (int)i * 7 + 1);
}

/* Blob sizes cycle through the extremes and odd lengths. */
static size_t round_bytes(int round)
{
    static const size_t sizes[] = {8, MAX_BLOB, 1, 33, 96, 239, 16};
    return sizes[round % (int)(sizeof sizes / sizeof sizes[0])];
}

int main(void)
{
    int rank = p2_rank(), size = p2_size();
    if (rank < 0 || size > MAX_RANKS)
        return 1;
    static uint8_t all[MAX_RANKS * MAX_BLOB];
    uint8_t mine[MAX_BLOB];
    long wrong = 0;
    double first_us = 0, later_us = 0;
    for (int round = 0; round < ROUNDS; round++) {
        size_t bytes = round_bytes(round);
        for (size_t i = 0; i < bytes; i++)
            mine[i] = blob_byte(round, rank, i);
        memset(all, 0, sizeof all);
        double t0 = p2_wtime();
        tcaresult r = p2_exchange(mine, all, bytes);
        double t1 = p2_wtime();
        if (r != TCA_SUCCESS) {
            fprintf(stderr, "rank %d: p2_exchange: %s\n", rank, tcaGetErrorString(r));
            return 1;
        }
        if (round == 0)
            first_us = (t1 - t0) * 1e6;
        else if (round == ROUNDS - 1)
            later_us = (t1 - t0) * 1e6;
        for (int q = 0; q < size; q++)
            for (size_t i = 0; i < bytes; i++)
                wrong += all[(size_t)q * bytes + i] != blob_byte(round, q, i);
        if (round % 5 == 4 && (r = p2_exchange_barrier()) != TCA_SUCCESS) {
            fprintf(stderr, "rank %d: p2_exchange_barrier: %s\n", rank, tcaGetErrorString(r));
            return 1;
        }
    }
    printf("rank %d of %d: %d exchanges, %ld wrong bytes; first %.3f us, last %.3f us "
           "(simulated)\n",
           rank, size, ROUNDS, wrong, first_us, later_us);
    return wrong ? 1 : 0;
}
