/*
 * channel.c - the job segment, the per-rank request rings and response slots,
 * and the futex wake-ups between ranks and the simulator.
 */
#define _GNU_SOURCE
#include "channel.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ---- Futexes ------------------------------------------------------------ */

void p2_futex_wait(const uint32_t *addr, uint32_t expected, long timeout_us)
{
    struct timespec ts, *tsp = NULL;
    if (timeout_us > 0) {
        ts.tv_sec = timeout_us / 1000000L;
        ts.tv_nsec = (timeout_us % 1000000L) * 1000L;
        tsp = &ts;
    }
    /* Shared futex (no FUTEX_PRIVATE_FLAG): the word lives in a mapping that
     * several processes share. EAGAIN (value changed), EINTR and ETIMEDOUT
     * all mean "look again", which every caller does. */
    syscall(SYS_futex, addr, FUTEX_WAIT, expected, tsp, NULL, 0);
}

void p2_futex_wake(const uint32_t *addr, int count)
{
    syscall(SYS_futex, addr, FUTEX_WAKE, count, NULL, NULL, 0);
}

/* ---- The job segment ---------------------------------------------------- */

void p2_job_segment_name(const p2_job_local *local, char *out, size_t outlen)
{
    snprintf(out, outlen, "%s-job", local->name);
}

/* Tries before giving up on names that exist already: with 64 random bits
 * a second clash means someone is creating names as fast as we draw them. */
#define P2_JOB_NAME_TRIES 8

/* "/p2-<owner>-<16 random hex digits>" into `prefix`. */
static int job_name_draw(const char *owner, char *prefix, size_t len)
{
    uint64_t bits;
    if (getrandom(&bits, sizeof bits, 0) != (ssize_t)sizeof bits)
        return -1;
    if ((size_t)snprintf(prefix, len, "/p2-%s-%016llx", owner, (unsigned long long)bits) >=
        len) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

/* Creates the job segment under a fresh name, never one that exists: an
 * object someone else made is neither used nor removed. */
static int job_segment_open(const char *owner, char *prefix, size_t len)
{
    for (int i = 0; i < P2_JOB_NAME_TRIES; i++) {
        char name[P2_JOB_NAME_MAX + 8];
        if (job_name_draw(owner, prefix, len) != 0)
            return -1;
        snprintf(name, sizeof name, "%s-job", prefix);
        int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1; /* errno: EEXIST */
}

p2_job *p2_job_create(const char *owner, unsigned nranks, p2_clock_mode mode,
                      p2_job_local *local)
{
    if (nranks == 0 || nranks > P2_JOB_MAX_RANKS) {
        errno = EINVAL;
        return NULL;
    }
    char prefix[P2_JOB_NAME_MAX], name[P2_JOB_NAME_MAX + 8];
    int fd = job_segment_open(owner, prefix, sizeof prefix);
    if (fd < 0)
        return NULL;
    snprintf(name, sizeof name, "%s-job", prefix);
    size_t bytes = p2_job_bytes(nranks);
    if (ftruncate(fd, (off_t)bytes) != 0) {
        int e = errno;
        close(fd);
        shm_unlink(name);
        errno = e;
        return NULL;
    }
    p2_job *job = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd);
    if (job == MAP_FAILED) {
        shm_unlink(name);
        errno = e;
        return NULL;
    }
    /* ftruncate zero-fills: every counter, flag and state starts at 0. */
    job->segment_bytes = bytes;
    memcpy(job->name, prefix, sizeof prefix);
    job->nranks = nranks;
    job->clock_mode = (uint32_t)mode;
    job->launcher_pid = (int32_t)getpid();
    for (unsigned r = 0; r < nranks * P2_RANK_LANES; r++)
        job->ranks[r].clock_pub = P2_CLOCK_UNKNOWN;
    p2_st_sc(&job->magic, P2_JOB_MAGIC);
    memset(local, 0, sizeof *local);
    memcpy(local->name, prefix, sizeof prefix);
    local->bytes = bytes;
    local->nranks = nranks;
    local->launcher_pid = job->launcher_pid;
    return job;
}

p2_job *p2_job_attach(const char *shm_name, p2_job_local *local, char *err, size_t errlen)
{
    int fd = shm_open(shm_name, O_RDWR, 0);
    if (fd < 0) {
        snprintf(err, errlen, "job segment %s: %s", shm_name, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(p2_job)) {
        snprintf(err, errlen, "job segment %s: too small to be a p2run job", shm_name);
        close(fd);
        return NULL;
    }
    p2_job *job = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (job == MAP_FAILED) {
        snprintf(err, errlen, "job segment %s: mmap: %s", shm_name, strerror(errno));
        return NULL;
    }
    /* Read each field once: what is checked is what is kept. */
    memset(local, 0, sizeof *local);
    local->bytes = (size_t)st.st_size;
    local->nranks = p2_ld(&job->nranks);
    local->launcher_pid = p2_ld(&job->launcher_pid);
    memcpy(local->name, job->name, sizeof local->name);
    size_t name_len = strnlen(local->name, sizeof local->name);
    char expect[P2_JOB_NAME_MAX + 8];
    snprintf(expect, sizeof expect, "%.*s-job", (int)name_len, local->name);
    if (p2_ld(&job->magic) != P2_JOB_MAGIC || p2_ld(&job->segment_bytes) != local->bytes ||
        local->nranks == 0 || local->nranks > P2_JOB_MAX_RANKS ||
        p2_job_bytes(local->nranks) != local->bytes || name_len == sizeof local->name ||
        strncmp(local->name, "/p2-", 4) != 0 || strcmp(expect, shm_name) != 0) {
        snprintf(err, errlen, "job segment %s: not a job of this p2run version", shm_name);
        munmap(job, (size_t)st.st_size);
        return NULL;
    }
    return job;
}

void p2_job_detach(p2_job *job, const p2_job_local *local)
{
    if (job)
        munmap(job, local->bytes);
}

int p2_job_unlink_all(const char *prefix)
{
    /* POSIX shm objects live in /dev/shm on Linux; names drop the leading '/'. */
    size_t len = strnlen(prefix, P2_JOB_NAME_MAX);
    if (len == P2_JOB_NAME_MAX || strncmp(prefix, "/p2-", 4) != 0 || len == 4)
        return 0; /* not a job's name: remove nothing */
    const char *base = prefix + 1;
    size_t n = len - 1;
    DIR *d = opendir("/dev/shm");
    if (!d)
        return 0;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, base, n) == 0 && e->d_name[n] == '-') {
            char name[NAME_MAX + 2];
            snprintf(name, sizeof name, "/%s", e->d_name);
            if (shm_unlink(name) == 0)
                removed++;
        }
    }
    closedir(d);
    return removed;
}

void p2_job_ring(p2_job *job)
{
    __atomic_add_fetch(&job->doorbell, 1, __ATOMIC_SEQ_CST);
    if (p2_ld_sc(&job->sim_sleeping))
        p2_futex_wake(&job->doorbell, 1);
}

int p2_job_ranks_spin(const p2_job *job)
{
    static long cpus;
    if (!cpus)
        cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return (long)p2_ld(&job->nranks) <= cpus;
}

void p2_job_sleep(p2_job *job, uint32_t seen, long timeout_us)
{
    for (int i = p2_job_ranks_spin(job) ? P2_CHAN_SPIN_ROUNDS : 0; i < P2_CHAN_SPIN_ROUNDS; i++) {
        if (p2_ld_sc(&job->doorbell) != seen)
            return;
        sched_yield();
    }
    p2_st_sc(&job->sim_sleeping, 1);
    if (p2_ld_sc(&job->doorbell) == seen)
        p2_futex_wait(&job->doorbell, seen, timeout_us);
    p2_st_sc(&job->sim_sleeping, 0);
}

/* ---- Rank side ---------------------------------------------------------- */

/* Whether the simulator can still answer: not ended, process alive. */
static int job_sim_alive(const p2_job *job)
{
    if (p2_ld(&job->sim_state) == P2_SIM_ENDED)
        return 0;
    pid_t pid = (pid_t)p2_ld(&job->sim_pid);
    return pid <= 0 || kill(pid, 0) == 0 || errno == EPERM;
}

int p2_chan_push(p2_job *job, p2_job_rank *r, const p2_chan_req *req)
{
    uint64_t head = r->req_head; /* only this rank writes it */
    int rounds = p2_job_ranks_spin(job) ? 0 : P2_CHAN_SPIN_ROUNDS;
    for (;;) {
        uint64_t tail = p2_ld_sc(&r->req_tail);
        if (head - tail < P2_CHAN_SLOTS)
            break;
        /* Full: the simulator is behind. Make sure it is awake, then wait for
         * it to consume (spin a little, then sleep on the tail's low word). */
        p2_job_ring(job);
        if (!job_sim_alive(job))
            return -1;
        if (rounds++ < P2_CHAN_SPIN_ROUNDS) {
            sched_yield();
            continue;
        }
        p2_st_sc(&r->producer_sleeping, 1);
        if (p2_ld_sc(&r->req_tail) == tail)
            p2_futex_wait((const uint32_t *)&r->req_tail, (uint32_t)tail, P2_CHAN_LIVENESS_US);
        p2_st_sc(&r->producer_sleeping, 0);
    }
    p2_chan_req *slot = &r->ring[head % P2_CHAN_SLOTS];
    /* Only requests with a payload copy it (a deadline wait carries its time
     * there, a wait on a second word that word). */
    size_t len = req->op == P2_CHAN_BAR_WRITE || req->op == P2_CHAN_GPU_REGISTER ||
                         (req->op == P2_CHAN_WAIT_MEM &&
                          (req->flags & (P2_CHAN_WAIT_DEADLINE | P2_CHAN_WAIT_ALSO)))
                     ? req->len
                     : 0;
    if (len > P2_CHAN_DATA_BYTES)
        len = P2_CHAN_DATA_BYTES;
    memcpy(slot, req, offsetof(p2_chan_req, data) + len);
    p2_st_sc(&r->req_head, head + 1);
    p2_job_ring(job);
    return 0;
}

int p2_chan_wait_resp(p2_job *job, p2_job_rank *r, uint32_t seq, p2_chan_resp *resp)
{
    int rounds = p2_job_ranks_spin(job) ? 0 : P2_CHAN_SPIN_ROUNDS;
    for (;;) {
        uint32_t cur = p2_ld(&r->resp.seq);
        if (cur == seq) {
            resp->seq = seq;
            resp->status = r->resp.status;
            resp->value = r->resp.value;
            resp->time_ps = r->resp.time_ps;
            return 0;
        }
        if (rounds++ < P2_CHAN_SPIN_ROUNDS) {
            sched_yield();
            continue;
        }
        p2_st_sc(&r->resp_sleeping, 1);
        if (p2_ld_sc(&r->resp.seq) == cur)
            p2_futex_wait(&r->resp.seq, cur, P2_CHAN_LIVENESS_US);
        p2_st_sc(&r->resp_sleeping, 0);
        if (p2_ld(&r->resp.seq) != seq && !job_sim_alive(job))
            return -1;
    }
}

/* ---- Simulator side ----------------------------------------------------- */

void p2_chan_consumed(p2_job_rank *r, uint64_t tail)
{
    p2_st_sc(&r->req_tail, tail);
    if (p2_ld_sc(&r->producer_sleeping))
        p2_futex_wake((const uint32_t *)&r->req_tail, 1);
}

void p2_chan_answer(p2_job_rank *r, uint32_t seq, int32_t status, uint64_t value,
                    uint64_t time_ps)
{
    r->resp.status = status;
    r->resp.value = value;
    r->resp.time_ps = time_ps;
    p2_st_sc(&r->resp.seq, seq); /* publishes the fields above */
    if (p2_ld_sc(&r->resp_sleeping))
        p2_futex_wake(&r->resp.seq, 1);
}
