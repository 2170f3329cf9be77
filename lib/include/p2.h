/*
 * p2.h - the project's own calls beside the TCA API: the rank's identity and
 * its clock, for programs run by p2run (with or without MPI, before or
 * without tcaInit).
 *
 * Time in emulation is simulated time: p2_wtime() reads the rank's virtual
 * clock, which device calls, waits and p2_compute() advance (and, under
 * `p2run --clock=cpu`, the CPU time the rank consumes).
 */
#ifndef P2_H
#define P2_H

#include <stdint.h>

#include "tca-api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* This process's rank in the job, 0 .. p2_size()-1; -1 when not started by
 * p2run (a message says so on stderr). */
int p2_rank(void);
/* Ranks in the job; 0 when not started by p2run. */
int p2_size(void);
/* The PEACH2 network ("sub-cluster") rank `rank`'s node is on: 0, 1, ... in
 * the order of each network's lowest node (HA-PACS/TCA's 64 nodes, four 2x8
 * tori: nodes 0-15 are sub-cluster 0, 16-31 sub-cluster 1, ...; a topology
 * whose cables join every node: 0). TCA DMA and PIO reach only the nodes of
 * the same sub-cluster (others: TCA_ERROR_UNREACHABLE); between them use
 * MPI. -1 for a rank outside 0 .. p2_size()-1, a node without a PEACH2
 * board, or a process not started by p2run. Any time, before tcaInit too,
 * in MPI programs as well. */
int p2_subcluster(int rank);
/* Seconds: the rank's simulated time in emulation (wall-clock time when not
 * started by p2run). */
double p2_wtime(void);
/* Charges `seconds` of modelled computation to this rank's clock (none for
 * zero or less). A clock pushed past the simulator's limit (about 53 days of
 * simulated time), or a NaN, ends the rank with a message. */
void p2_compute(double seconds);
/* The value of the rank parameter `name` (a RANK row of params.def, in its
 * unit), as this job's parameter file set it; the row's default when the
 * process was not started by p2run. NaN for a name that is not a rank
 * parameter. Programs' own cost models read their figures with it, so
 * `p2run --params` changes them as it changes the library's. */
double p2_param(const char *name);
/* Returns when the 64-bit word at `addr` holds `value`. `addr` must be an
 * aligned word of memory from tcaMalloc (host or GPU); in emulation the call
 * blocks until the model writes the value and returns at that simulated time
 * (plus the polling delay). TCA_ERROR_NOT_REGISTERED for other memory,
 * TCA_ERROR_DEVICE when the device or simulator is gone. */
tcaresult p2_wait_u64(const volatile uint64_t *addr, uint64_t value);
/* As p2_wait_u64 without blocking: TCA_SUCCESS if the word holds `value` at
 * this rank's simulated time, TCA_NOT_YET if not (the clock moves by the
 * call's cost and the polling delay either way, so a loop of tests advances
 * in simulated time as a CPU spinning on the word does). Same errors. */
tcaresult p2_test_u64(const volatile uint64_t *addr, uint64_t value);

/* The rank's lock, for a library whose threads share state (a progress
 * thread and the program's threads): the simulator hands it out in
 * simulated-time order ((stamp, lane), as it runs every request), so which
 * thread gets it first, and what it sees there, is the same on every run
 * whatever the host's scheduling. A free lock is taken at the caller's
 * clock at no cost; a taken one is waited for (blocked, holding no time
 * back) until its holder's p2_unlock. Not recursive; hold it for memory
 * work only (no blocking call inside). It is the lock the MPI layer takes
 * around its calls under MPI_THREAD_MULTIPLE, so a thread must not call MPI
 * while holding it. Without p2run: a process mutex. TCA_ERROR_DEVICE when
 * the simulator is gone. */
tcaresult p2_lock(void);
tcaresult p2_unlock(void);

/* Bootstrap exchange for programs without MPI (every rank calls it, the
 * same number of times, with the same `bytes`): all[q * bytes ...] = rank q's
 * `mine`, for q in 0 .. p2_size()-1. `bytes` is 1 .. 240; `all` holds
 * p2_size() * bytes. Runs over the interconnect with PIO into a mailbox that
 * tcaInit reserves at the start of every node's host memory (calls tcaInit
 * itself). On a job whose ranks are on several PEACH2 sub-clusters, which
 * no cable joins, the sub-clusters' leaders cross over InfiniBand (RDMA
 * writes of the node's HCA; the topology must give the nodes one), before
 * MPI starts: once it has, the MPI layer holds the HCA and p2_exchange
 * returns TCA_ERROR_UNREACHABLE on every rank there (rank 0 says why on
 * stderr: exchange handles with MPI). Ranks that pass different `bytes`
 * all get TCA_ERROR_INVALID_ARGUMENT, `all` untouched, the lowest rank
 * saying on stderr which ranks passed what; the exchange after it works.
 * Not thread safe.
 * TCA_ERROR_INVALID_ARGUMENT, tcaInit's errors, TCA_ERROR_DEVICE. */
tcaresult p2_exchange(const void *mine, void *all, size_t bytes);
/* Returns once every rank has called it: an exchange of 8 bytes. */
tcaresult p2_exchange_barrier(void);

#ifdef __cplusplus
}
#endif

#endif /* P2_H */
