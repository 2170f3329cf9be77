/*
 * channel.h - creating, mapping and using the job segment (its layout:
 * p2_job.h, in the contract layer): the rank's side of a channel (push a
 * request, wait for its answer), the simulator's (consume, answer), the
 * doorbell and the futexes both sleep on.
 *
 * Waking: the side that waits spins briefly with sched_yield, then sleeps on a
 * futex in the shared mapping (FUTEX_WAIT/FUTEX_WAKE, not the _PRIVATE
 * variants: the futex is shared between processes). A sleeper announces itself
 * in a flag so the other side only pays for FUTEX_WAKE when someone sleeps.
 */
#ifndef P2_EMU_CHANNEL_H
#define P2_EMU_CHANNEL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "p2_job.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Spinning before sleeping: enough rounds to catch an answer that is
 * microseconds away. Only while the job's ranks fit the cores: with more
 * ranks than cores, spinners crowd out the simulator, which every answer
 * waits for (involuntary context switches by the million), so a waiting
 * rank sleeps at once and the simulator, which then has a core to itself,
 * spins for the next request instead (p2_job_ranks_spin). */
#define P2_CHAN_SPIN_ROUNDS 64
/* A sleeper wakes this often (microseconds) to check that its peer still
 * lives; a dead peer is then reported instead of waited for forever. */
#define P2_CHAN_LIVENESS_US 100000
/* --clock=cpu: how often the simulator re-reads the CPU clocks of running
 * ranks while it has nothing else to do (a rank spinning on memory never
 * rings the doorbell). Shorter polls track the spinners' clocks closer. */
#define P2_CHAN_CPU_POLL_US 20

/* Whether this job's waiting ranks spin before sleeping (ranks <= online
 * cores); if not, the simulator spins for requests before it sleeps. */
int p2_job_ranks_spin(const p2_job *job);

/* Futex on a 32-bit word of a shared mapping. wait returns when *addr != expected,
 * on a wake, a signal, or after timeout_us (<= 0: no timeout). */
void p2_futex_wait(const uint32_t *addr, uint32_t expected, long timeout_us);
void p2_futex_wake(const uint32_t *addr, int count);

/* ---- The job segment ---------------------------------------------------- */
/* What p2run and the simulator know about the job in their own memory: every
 * rank can write the segment, so nothing they act on later (the names they
 * remove, the size they unmap) is read back from it. */
typedef struct p2_job_local {
    char name[P2_JOB_NAME_MAX]; /* "/p2-<jobid>" */
    size_t bytes;               /* the mapping's size */
    unsigned nranks;
    int32_t launcher_pid;
} p2_job_local;

/* Creates "/p2-<owner>-<random hex>-job" sized for nranks (p2run; `owner` is
 * its pid), drawing another name when one exists already. Returns NULL with
 * errno. */
p2_job *p2_job_create(const char *owner, unsigned nranks, p2_clock_mode mode,
                      p2_job_local *local);
/* Maps an existing job segment by its full shm name (the value of P2_JOB),
 * checking it once. Returns NULL with a message in `err`. */
p2_job *p2_job_attach(const char *shm_name, p2_job_local *local, char *err, size_t errlen);
void p2_job_detach(p2_job *job, const p2_job_local *local);
/* The job segment's shm name, "<name>-job". */
void p2_job_segment_name(const p2_job_local *local, char *out, size_t outlen);
/* Removes every shm object whose name starts with "<prefix>-" (cleanup;
 * prefix is a job's name, "/p2-<jobid>", at most P2_JOB_NAME_MAX bytes with
 * its terminator). Returns how many were removed; 0 for anything else. */
int p2_job_unlink_all(const char *prefix);

/* Wakes the simulator if it sleeps (after a push, attach, exit, reap). */
void p2_job_ring(p2_job *job);
/* The simulator sleeps until the doorbell rings (or timeout_us passes);
 * `seen` is the doorbell value read before it last checked for work. */
void p2_job_sleep(p2_job *job, uint32_t seen, long timeout_us);

/* ---- Rank side of a channel -------------------------------------------- */
/* Pushes one request, sleeping while the ring is full. Returns 0, or -1 if the
 * simulator is gone. */
int p2_chan_push(p2_job *job, p2_job_rank *r, const p2_chan_req *req);
/* Waits for the response to request `seq`. Returns 0, or -1 if the simulator is
 * gone (then *resp is untouched). */
int p2_chan_wait_resp(p2_job *job, p2_job_rank *r, uint32_t seq, p2_chan_resp *resp);

/* ---- Simulator side of a channel ---------------------------------------- */
/* Requests before `tail` are consumed: their slots are the rank's again. */
void p2_chan_consumed(p2_job_rank *r, uint64_t tail);
/* Posts the answer to a blocking request and wakes the rank. */
void p2_chan_answer(p2_job_rank *r, uint32_t seq, int32_t status, uint64_t value,
                    uint64_t time_ps);

#ifdef __cplusplus
}
#endif

#endif /* P2_EMU_CHANNEL_H */
