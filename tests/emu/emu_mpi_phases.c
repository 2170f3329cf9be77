/*
 * emu_mpi_phases.c - a TCA client written the way public ones are: MPI
 * start-up, handles exchanged with MPI_Allgather, then three DMA ping-pong
 * phases on the same slot and tag with MPI_Barrier between them. Under
 * --clock=cpu a rank waiting inside MPI between phases used to be taken for
 * a deadlocked one ("waiting for a DMA notification (ring entry 404)").
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2.h"
#include "tca-api.h"
/* A failed CHECK ends the whole job, under mpirun too. */
#define P2_CHECK_END() MPI_Abort(MPI_COMM_WORLD, 1)
#include "p2_check.h"

#define PHASES 3
#define ROUNDS 200
#define BYTES 64
#define SLOT 3
#define TAG 0x100

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        fprintf(stderr, "needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    CHECK(tcaInit());
    unsigned char *buf;
    CHECK(tcaMalloc((void **)&buf, 2 * BYTES, tcaMemoryCPU));
    tcaHandle mine, all[2];
    CHECK(tcaCreateHandle(&mine, buf, 2 * BYTES, tcaMemoryCPU));
    MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all, sizeof mine, MPI_BYTE, MPI_COMM_WORLD);
    const tcaHandle *peer = &all[1 - rank];

    tcaDesc *d = tcaDescNew();
    CHECK(tcaDescSetMemcpy(d, peer, BYTES, &mine, 0, BYTES, tcaDMANotify, SLOT, TAG));
    CHECK(tcaDescSet(d, 0));
    long wrong = 0;
    double phase_us[PHASES];
    for (int phase = 0; phase < PHASES; phase++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double start = p2_wtime();
        for (int i = 0; i < ROUNDS; i++) {
            unsigned char v = (unsigned char)(phase * ROUNDS + i);
            /* Each rank checks what it received right after the wait: once
             * it answers, the peer may send the next round into the same
             * buffer (as on the hardware). */
            if (rank == 0) {
                memset(buf, v, BYTES);
                CHECK(tcaStartDMADesc(0));
                CHECK(tcaWaitDMARecvDesc(peer, SLOT, TAG));
                for (int b = 0; b < BYTES; b++)
                    wrong += buf[BYTES + b] != v;
                CHECK(tcaWaitDMAC(0));
            } else {
                CHECK(tcaWaitDMARecvDesc(peer, SLOT, TAG));
                for (int b = 0; b < BYTES; b++)
                    wrong += buf[BYTES + b] != v;
                memcpy(buf, buf + BYTES, BYTES);
                CHECK(tcaStartDMADesc(0));
                CHECK(tcaWaitDMAC(0));
            }
        }
        phase_us[phase] = (p2_wtime() - start) * 1e6;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* Simulated times: the same on every run under --clock=model. */
    printf("rank %d: %d phases of %d round trips, %ld wrong bytes; phases took %.3f %.3f %.3f us, "
           "ended at %.3f us\n", rank, PHASES, ROUNDS, wrong, phase_us[0], phase_us[1], phase_us[2],
           p2_wtime() * 1e6);
    tcaDescFree(d);
    tcaFinalize();
    MPI_Finalize();
    return wrong ? 1 : 0;
}
