/* emu_hostile MODE: rank 0 writes what no library call writes into the job's
 * shared memory; rank 1 waits for a word nobody writes. p2run and p2sim must
 * end the job naming rank 0 and the field (status 4), or, for the name
 * modes, clean up their own job only; never hang, crash or leave anything.
 *   stamp-max     a request stamped UINT64_MAX
 *   stamp-back    a request stamped before its predecessor
 *   head          req_head a million requests ahead
 *   op            an unknown operation
 *   lock          a LOCK of a lock the rank does not have
 *   len           a store claiming more bytes than a request carries
 *   clock         a published clock past the limit
 *   truncate-job  the job segment cut to one page
 *   truncate-arena  the node's host arena cut to nothing, then a wait on it
 *   name-decoy    the job's name pointed at another job's ("/p2-decoy")
 *   name-long     the job's name with no terminator
 *   compute-big   p2_compute(1e7) twice: past the clock's limit
 *   compute-nan   p2_compute(NaN) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "arena.h"
#include "channel.h"
#include "p2.h"
#include "rt/rt.h"

static void push(p2_rt *rt, p2_chan_req *q)
{
    if (p2_chan_push(rt->job, &rt->job->ranks[rt->rank], q) != 0) {
        fprintf(stderr, "emu_hostile: the simulator is gone\n");
        exit(1);
    }
}

static void idle(void)
{
    for (;;)
        pause();
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: emu_hostile MODE\n");
        return 2;
    }
    const char *mode = argv[1];
    p2_rt *rt = p2_rt_get();
    if (!rt)
        return 1;
    if (rt->rank != 0) {
        /* A wait the model never satisfies: only rank 0's doing ends the job. */
        int w = p2_rt_wait_mem(rt, (const volatile uint64_t *)rt->host.base, ~0ull, 0x5eed, 1);
        printf("rank %d: wait returned %d\n", rt->rank, w);
        return 0;
    }
    p2_chan_req q;
    memset(&q, 0, sizeof q);
    q.op = P2_CHAN_UNPARK; /* posted, no device: harmless when well formed */
    q.a = 1;
    if (strcmp(mode, "stamp-max") == 0) {
        q.stamp_ps = UINT64_MAX;
        push(rt, &q);
    } else if (strcmp(mode, "stamp-back") == 0) {
        q.stamp_ps = 2000000;
        push(rt, &q);
        q.stamp_ps = 1000;
        push(rt, &q);
    } else if (strcmp(mode, "head") == 0) {
        p2_job_rank *ch = &rt->job->ranks[0];
        p2_st_sc(&ch->req_head, ch->req_head + 1000000);
        p2_job_ring(rt->job);
    } else if (strcmp(mode, "op") == 0) {
        q.op = 99;
        push(rt, &q);
    } else if (strcmp(mode, "lock") == 0) {
        q.op = P2_CHAN_LOCK;
        q.a = 5;
        push(rt, &q);
    } else if (strcmp(mode, "len") == 0) {
        q.op = P2_CHAN_BAR_WRITE;
        p2_job_rank *ch = &rt->job->ranks[0];
        p2_chan_req *slot = &ch->ring[ch->req_head % P2_CHAN_SLOTS];
        *slot = q;
        slot->len = 1u << 30;
        p2_st_sc(&ch->req_head, ch->req_head + 1);
        p2_job_ring(rt->job);
    } else if (strcmp(mode, "clock") == 0) {
        p2_st_sc(&rt->job->ranks[0].clock_pub, INT64_MAX - 1);
        p2_job_ring(rt->job);
    } else if (strcmp(mode, "truncate-job") == 0) {
        int fd = shm_open(getenv("P2_JOB"), O_RDWR, 0);
        if (fd < 0 || ftruncate(fd, 4096) != 0) {
            perror("emu_hostile: truncating the job segment");
            return 1;
        }
        p2_job_ring(rt->job);
    } else if (strcmp(mode, "truncate-arena") == 0) {
        char name[128], job[P2_JOB_NAME_MAX + 8];
        snprintf(job, sizeof job, "%s", getenv("P2_JOB"));
        job[strlen(job) - 4] = '\0'; /* drop "-job" */
        p2_arena_name(job, (unsigned)rt->node, P2_ARENA_HOST, name, sizeof name);
        int fd = shm_open(name, O_RDWR, 0);
        if (fd < 0 || ftruncate(fd, 0) != 0) {
            perror("emu_hostile: truncating the host arena");
            return 1;
        }
        q.op = P2_CHAN_WAIT_MEM; /* the simulator reads the word at once */
        q.flags = P2_CHAN_WAIT_BLOCK;
        q.seq = 1;
        q.a = rt->host.bus;
        q.b = 1;
        q.c = ~0ull;
        push(rt, &q);
    } else if (strcmp(mode, "name-decoy") == 0 || strcmp(mode, "name-long") == 0) {
        if (mode[5] == 'd')
            snprintf(rt->job->name, sizeof rt->job->name, "/p2-decoy");
        else
            memset(rt->job->name, 'A', sizeof rt->job->name);
        printf("rank 0: job name overwritten\n");
        fflush(stdout);
        _exit(0); /* rank 1 waits on: the job ends in a deadlock, cleaned up */
    } else if (strcmp(mode, "compute-big") == 0) {
        p2_compute(1e7);
        p2_compute(1e7);
        printf("rank 0: clock %g s (it should never get here)\n", p2_wtime());
        return 0;
    } else if (strcmp(mode, "compute-nan") == 0) {
        p2_compute(NAN);
        printf("rank 0: clock %g s (it should never get here)\n", p2_wtime());
        return 0;
    } else {
        fprintf(stderr, "emu_hostile: unknown mode %s\n", mode);
        return 2;
    }
    idle();
}
