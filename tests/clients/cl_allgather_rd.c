/*
 * cl_allgather_rd: recursive-doubling allgather of GPU buffers written as the
 * public HA-PACS/TCA allgather benchmark is. Every rank first copies its own
 * block into place with a local DMA (notify + notify-self on slot 0, waited
 * for with its own send handle), then at step i sends everything it has to
 * rank ^ 2^(i-1) on its own DMAC channel (slot i, one tag for every step,
 * notify + notify-self + pipeline) and waits for the partner's data with the
 * partner's handle: the handle, not (slot, tag), tells the partner's
 * notification from its own completion. The channels are not waited for
 * (the program relies on the notifications alone), except the first, which
 * is reloaded for step 1.
 *
 * Usage: cl_allgather_rd [MAX_COUNT [TIMES]]: counts of doubles per rank
 * from 2 to MAX_COUNT (default 1024), TIMES timed calls (default 100) after
 * 10 warm-up calls. Prints per count the time per call (average over the
 * calls of the slowest rank's time) and the number of wrong elements.
 */
#include <math.h>
#include <string.h>

#include "cl_common.h"

#define WARMUP 10

int main(int argc, char **argv)
{
    int my_rank, num_proc;
    setvbuf(stdout, NULL, _IOLBF, 0); /* rows appear as they are measured */
    MPI_Init(&argc, &argv);
    TCA_SAFE_CALL(tcaInit());
    MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &num_proc);
    const int max_count = argc > 1 ? atoi(argv[1]) : 1024;
    const int times = argc > 2 ? atoi(argv[2]) : 100;
    int num_comm = 0;
    while ((1 << num_comm) < num_proc)
        num_comm++;
    if ((1 << num_comm) != num_proc || num_comm > 4 || max_count < 2 || times < 1) {
        if (my_rank == 0)
            fprintf(stderr, "cl_allgather_rd: 2, 4, 8 or 16 ranks; MAX_COUNT >= 2; TIMES >= 1\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    CUDA_SAFE_CALL(cudaSetDevice(0));
    const int wait_tag = 0x100;
    const int dmaFlag = tcaDMAUseInternal | tcaDMAUseNotifyInternal | tcaDMANotify |
                        tcaDMAPipeline | tcaDMANotifySelf;
    long total_wrong = 0;
    if (my_rank == 0)
        printf("%10s %14s %10s\n", "bytes", "time/call(us)", "wrong");

    for (int count = 2; count <= max_count; count *= 2) {
        size_t byte = (size_t)count * sizeof(double), whole_byte = byte * (size_t)num_proc;
        double *host_send, *host_recv, *dev_send, *dev_recv;
        CUDA_SAFE_CALL(cudaMallocHost((void **)&host_send, byte));
        CUDA_SAFE_CALL(cudaMallocHost((void **)&host_recv, whole_byte));
        TCA_SAFE_CALL(tcaMalloc((void **)&dev_send, byte, tcaMemoryGPU));
        TCA_SAFE_CALL(tcaMalloc((void **)&dev_recv, whole_byte, tcaMemoryGPU));
        for (int i = 0; i < count; i++)
            host_send[i] = my_rank * 1000000.0 + i;
        for (int i = 0; i < count * num_proc; i++)
            host_recv[i] = -1.0;
        CUDA_SAFE_CALL(cudaMemcpy(dev_send, host_send, byte, cudaMemcpyDefault));
        CUDA_SAFE_CALL(cudaMemcpy(dev_recv, host_recv, whole_byte, cudaMemcpyDefault));

        tcaHandle send_handle, *handles;
        TCA_SAFE_CALL(tcaCreateHandle(&send_handle, dev_send, byte, tcaMemoryGPU));
        tcaCreateHandleList(&handles, num_proc, dev_recv, whole_byte);

        tcaDesc *desc[5];
        desc[0] = tcaDescNew();
        TCA_SAFE_CALL(tcaDescSetMemcpy(desc[0], &handles[my_rank], my_rank * byte, &send_handle,
                                       0, byte, dmaFlag, 0, wait_tag));
        int rank_group = my_rank;
        for (int i = 1, mask = 1; mask < num_proc; mask <<= 1, i++) {
            int target = my_rank ^ mask;
            desc[i] = tcaDescNew();
            TCA_SAFE_CALL(tcaDescSetMemcpy(desc[i], &handles[target], rank_group * byte,
                                           &handles[my_rank], rank_group * byte, mask * byte,
                                           dmaFlag, i, wait_tag));
            if (my_rank >= target)
                rank_group -= mask;
        }

        double sum_time = 0.0;
        for (int t = 0; t < WARMUP + times; t++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double start = MPI_Wtime();
            int ch = num_comm - 1;
            TCA_SAFE_CALL(tcaDescSet(desc[0], ch));
            TCA_SAFE_CALL(tcaStartDMADesc(ch));
            TCA_SAFE_CALL(tcaWaitDMARecvDesc(&send_handle, 0, wait_tag));
            for (int i = 1, mask = 1; mask < num_proc; mask <<= 1, i++) {
                if (i > 1)
                    ch--;
                else
                    TCA_SAFE_CALL(tcaWaitDMAC(ch));
                TCA_SAFE_CALL(tcaDescSet(desc[i], ch));
                TCA_SAFE_CALL(tcaStartDMADesc(ch));
                TCA_SAFE_CALL(tcaWaitDMARecvDesc(&handles[my_rank ^ mask], i, wait_tag));
            }
            double my_time = MPI_Wtime() - start, max_time;
            MPI_Allreduce(&my_time, &max_time, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (t >= WARMUP)
                sum_time += max_time;
        }
        /* The program's own channels: every step's DMA done before the check
         * and before the next size frees the buffers. */
        for (int c = 0; c < num_comm; c++)
            TCA_SAFE_CALL(tcaWaitDMAC(c));
        MPI_Barrier(MPI_COMM_WORLD);
        CUDA_SAFE_CALL(cudaMemcpy(host_recv, dev_recv, whole_byte, cudaMemcpyDefault));
        long wrong = 0;
        for (int r = 0; r < num_proc; r++)
            for (int i = 0; i < count; i++)
                wrong += host_recv[(size_t)r * count + i] != r * 1000000.0 + i;
        long all_wrong;
        MPI_Allreduce(&wrong, &all_wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        total_wrong += all_wrong;
        if (my_rank == 0)
            printf("%10zu %14.3f %10ld\n", byte, sum_time / times * 1e6, all_wrong);

        for (int i = 0; i <= num_comm; i++)
            TCA_SAFE_CALL(tcaDescFree(desc[i]));
        free(handles);
        CUDA_SAFE_CALL(cudaFreeHost(host_send));
        CUDA_SAFE_CALL(cudaFreeHost(host_recv));
        TCA_SAFE_CALL(tcaFree(dev_send, tcaMemoryGPU));
        TCA_SAFE_CALL(tcaFree(dev_recv, tcaMemoryGPU));
    }
    if (my_rank == 0)
        printf("cl_allgather_rd: %d ranks, %s\n", num_proc,
               total_wrong ? "WRONG DATA" : "all data right");
    MPI_Finalize();
    return total_wrong ? 1 : 0;
}
