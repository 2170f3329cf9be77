/* emu_mpi: ranks started by `p2run --launcher mpirun` attach with Open MPI's
 * rank number and exchange addresses over MPI, as TCA clients exchange
 * handles. Rank 0 then PIO-writes a word to the address rank 1 sent it, and
 * rank 1 waits for it in the model. */
#include <inttypes.h>
#include <stdio.h>

#include <mpi.h>

#include "dev/dev.h"
#include "peach2_hw.h"
#include "p2.h"

#define WORD_OFFSET 0x2000
#define VALUE 0x600dcafeULL

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    p2_dev *dev = p2_device_get("peach2");
    if (!dev || dev->rank != rank || dev->size != size) {
        fprintf(stderr, "emu_mpi: rank %d: the job says rank %d of %d\n", rank,
                dev ? dev->rank : -1, dev ? dev->size : -1);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* Every rank publishes (node, host offset) of its receive word. */
    uint64_t mine[2] = {dev->node, WORD_OFFSET}, theirs[2];
    int peer = rank ^ 1;
    MPI_Sendrecv(mine, 2, MPI_UINT64_T, peer, 0, theirs, 2, MPI_UINT64_T, peer, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int rc = 0;
    if (rank == 0) {
        uint64_t v = VALUE;
        dev->ops->bar_write(dev, P2_BAR_PIO, p2_pio_offset((unsigned)theirs[0], theirs[1]), &v, sizeof v);
        dev->ops->bar_flush(dev);
    } else if (rank == 1) {
        volatile uint64_t *word = (volatile uint64_t *)(dev->host_mem + WORD_OFFSET);
        rc = p2_wait_u64(word, VALUE) != TCA_SUCCESS;
        printf("rank 1: word arrived at %.3f us\n", p2_wtime() * 1e6);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return rc;
}
