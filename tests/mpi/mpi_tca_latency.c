/* mpi_tca_latency: a TCA client written the way public ones are (MPI start-up,
 * handles over MPI_Allgather, MPI_Barrier, MPI_Wtime timing) measuring the
 * 8 B DMA ping-pong exactly as workloads/pingpong does, then the same over
 * MPI: under the default --clock=model it must finish and report the
 * calibrated TCA figure (DMA 8 B 1.896 us against the published 1.9 us;
 * model/README.md, "Published figures") beside MPI's. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "p2.h"
#include "tca-api.h"
/* A failed CHECK ends the whole job, under mpirun too. */
#define P2_CHECK_END() MPI_Abort(MPI_COMM_WORLD, 1)
#include "p2_check.h"

#define BYTES 8
#define ITERS 20
#define WARMUP 5
#define PING 1
#define PONG 2
#define TAG 0x77

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2)
        MPI_Abort(MPI_COMM_WORLD, 2);
    CHECK(tcaInit());
    unsigned char *send, *recv;
    CHECK(tcaMalloc((void **)&send, 64, tcaMemoryCPU));
    CHECK(tcaMalloc((void **)&recv, 64, tcaMemoryCPU));
    tcaHandle hs, hr, all[2];
    CHECK(tcaCreateHandle(&hs, send, 64, tcaMemoryCPU));
    CHECK(tcaCreateHandle(&hr, recv, 64, tcaMemoryCPU));
    MPI_Allgather(&hr, sizeof hr, MPI_BYTE, all, sizeof hr, MPI_BYTE, MPI_COMM_WORLD);
    tcaDesc *d = tcaDescNew();
    CHECK(tcaDescSetMemcpy(d, &all[1 - rank], 0, rank == 0 ? &hs : &hr, 0, BYTES, tcaDMANotify,
                           rank == 0 ? PING : PONG, TAG));
    CHECK(tcaDescSet(d, 0));
    MPI_Barrier(MPI_COMM_WORLD);
    double sum = 0;
    long wrong = 0;
    for (int i = 0; i < WARMUP + ITERS; i++) {
        if (rank == 0) {
            memset(send, i + 1, BYTES);
            double t0 = MPI_Wtime();
            CHECK(tcaStartDMADesc(0));
            CHECK(tcaWaitDMARecvDesc(&all[1], PONG, TAG));
            double t1 = MPI_Wtime();
            CHECK(tcaWaitDMAC(0));
            if (i >= WARMUP)
                sum += t1 - t0;
            for (int b = 0; b < BYTES; b++)
                wrong += recv[b] != (unsigned char)(i + 1);
        } else {
            CHECK(tcaWaitDMARecvDesc(&all[0], PING, TAG));
            CHECK(tcaStartDMADesc(0));
            CHECK(tcaWaitDMAC(0));
        }
    }
    double tca_us = sum / (2.0 * ITERS) * 1e6;
    MPI_Barrier(MPI_COMM_WORLD);
    char m[BYTES] = {0};
    sum = 0;
    for (int i = 0; i < WARMUP + ITERS; i++) {
        double t0 = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(m, BYTES, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(m, BYTES, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(m, BYTES, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(m, BYTES, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
        if (i >= WARMUP)
            sum += MPI_Wtime() - t0;
    }
    double t_end = MPI_Wtime(), t_max;
    MPI_Allreduce(&t_end, &t_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("8 B half round trip: TCA DMA %.3f us (%ld wrong bytes), MPI over IB %.3f us; "
               "all done at %.3f us\n", tca_us, wrong, sum / (2.0 * ITERS) * 1e6, t_max * 1e6);
    tcaDescFree(d);
    tcaFinalize();
    MPI_Finalize();
    return wrong ? 1 : 0;
}
