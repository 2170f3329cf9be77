/*
 * cl_progress_thread: communication driven by a helper thread, as runtimes
 * built on TCA do it (a PGAS runtime's communication thread, QUDA's progress
 * thread). Two ranks play ping-pong over DMA with notifications; on each rank
 * a progress thread receives (tcaWaitDMARecvDesc with the peer's handle, then
 * a p2_wait_u64 on the sequence word that ends the message) and answers
 * (tcaStartDMADesc, tcaWaitDMAC), while the main thread sleeps in
 * pthread_cond_wait until the progress thread has seen every round. Then the
 * main thread joins it, checks the data and prints the round trip.
 *
 * In mode "mpi" the main thread of rank 0 waits in MPI_Recv instead (a
 * blocking wait of its own in the simulator) for a message rank 1's main
 * thread sends once its progress thread is done: one thread of a rank blocked
 * in the libraries must not stop another.
 *
 * In mode "spin" the progress thread polls the sequence word with plain loads
 * (no library call), as clients do after PIO and as XcalableMP's
 * communication thread polls its ring buffers: the simulator takes such a
 * helper thread for a poller while its main thread sleeps (model/sim/
 * frontend.h, "Pollers"), and --clock=cpu counts its CPU time instead.
 *
 * Mode "mpispin" is both: the progress thread spins while rank 0's main thread
 * waits in MPI_Recv.
 *
 * In mode "stuck" the progress threads spin as in "spin", but rank 1's never
 * answers: rank 0's polls for ever while its main thread sleeps, and the job
 * must end as a deadlock that names the polling thread.
 *
 * Usage: cl_progress_thread [ROUNDS [sleep|mpi|spin|mpispin|stuck]] (default 50, sleep).
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "cl_common.h"
#include "p2.h"

#define SLOT 3
#define TAG 0x100
#define BYTES 64 /* 56 bytes of payload, then the 8-byte sequence word */

static int rank, rounds, spin, stuck;
static uint64_t *send_buf, *recv_buf;
static tcaHandle peer_recv, peer_any;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cond = PTHREAD_COND_INITIALIZER;
static int done;
static long wrong;
static double t_first, t_last;

static void send_round(uint64_t seq)
{
    for (int w = 0; w < BYTES / 8 - 1; w++)
        send_buf[w] = seq * 100 + (uint64_t)w;
    send_buf[BYTES / 8 - 1] = seq;
    TCA_SAFE_CALL(tcaStartDMADesc(0));
    TCA_SAFE_CALL(tcaWaitDMAC(0));
}

static void receive_round(uint64_t seq)
{
    if (spin) {
        while (((volatile uint64_t *)recv_buf)[BYTES / 8 - 1] != seq)
            ;
    } else {
        TCA_SAFE_CALL(tcaWaitDMARecvDesc(&peer_any, SLOT, TAG));
        TCA_SAFE_CALL(p2_wait_u64(&recv_buf[BYTES / 8 - 1], seq));
    }
    for (int w = 0; w < BYTES / 8 - 1; w++)
        wrong += recv_buf[w] != seq * 100 + (uint64_t)w;
}

static void *progress(void *arg)
{
    (void)arg;
    t_first = p2_wtime();
    for (int r = 1; r <= rounds; r++) {
        const uint64_t ping = 2 * (uint64_t)r - 1, pong = 2 * (uint64_t)r;
        if (rank == 0) {
            send_round(ping);
            receive_round(pong);
        } else {
            receive_round(ping);
            if (stuck)
                break;
            send_round(pong);
        }
    }
    t_last = p2_wtime();
    pthread_mutex_lock(&lock);
    done = 1;
    pthread_cond_signal(&done_cond);
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rounds = argc > 1 ? atoi(argv[1]) : 50;
    const int main_in_mpi = argc > 2 && (!strcmp(argv[2], "mpi") || !strcmp(argv[2], "mpispin"));
    stuck = argc > 2 && !strcmp(argv[2], "stuck");
    spin = stuck || (argc > 2 && (!strcmp(argv[2], "spin") || !strcmp(argv[2], "mpispin")));
    if (size != 2 || rounds < 1 ||
        (argc > 2 && !main_in_mpi && !spin && strcmp(argv[2], "sleep")))
        MPI_Abort(MPI_COMM_WORLD, 2);
    TCA_SAFE_CALL(tcaInit());
    TCA_SAFE_CALL(tcaMalloc((void **)&send_buf, BYTES, tcaMemoryCPU));
    TCA_SAFE_CALL(tcaMalloc((void **)&recv_buf, BYTES, tcaMemoryCPU));
    memset(recv_buf, 0, BYTES);
    tcaHandle mine, all[2];
    TCA_SAFE_CALL(tcaCreateHandle(&mine, recv_buf, BYTES, tcaMemoryCPU));
    MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all, sizeof mine, MPI_BYTE, MPI_COMM_WORLD);
    peer_recv = peer_any = all[1 - rank];
    tcaHandle src;
    TCA_SAFE_CALL(tcaCreateHandle(&src, send_buf, BYTES, tcaMemoryCPU));
    tcaDesc *d = tcaDescNew();
    TCA_SAFE_CALL(tcaDescSetMemcpy(d, &peer_recv, 0, &src, 0, BYTES, tcaDMANotify, SLOT, TAG));
    TCA_SAFE_CALL(tcaDescSet(d, 0));
    MPI_Barrier(MPI_COMM_WORLD);

    pthread_t helper;
    pthread_create(&helper, NULL, progress, NULL);
    int token = 0;
    if (main_in_mpi && rank == 0)
        MPI_Recv(&token, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    pthread_mutex_lock(&lock);
    while (!done)
        pthread_cond_wait(&done_cond, &lock);
    pthread_mutex_unlock(&lock);
    if (main_in_mpi && rank == 1)
        MPI_Send(&token, 1, MPI_INT, 0, 9, MPI_COMM_WORLD);
    pthread_join(helper, NULL);
    const double t_main = MPI_Wtime();

    long all_wrong;
    MPI_Allreduce(&wrong, &all_wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    double t_end;
    MPI_Reduce(&t_main, &t_end, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("cl_progress_thread: %d rounds driven by a progress thread (main thread %s), "
               "half round trip %.3f us, main threads done at %.3f us, %s\n", rounds,
               main_in_mpi ? (spin ? "in MPI_Recv, progress thread spinning" : "in MPI_Recv")
                           : spin ? "asleep, progress thread spinning" : "asleep",
               (t_last - t_first) / (2.0 * rounds) * 1e6,
               t_end * 1e6, all_wrong ? "WRONG DATA" : "all data right");
    tcaDescFree(d);
    MPI_Finalize();
    return all_wrong ? 1 : 0;
}
