/*
 * instr_counter.c - a thread's retired user-mode instructions
 * (instr_counter.h): perf_event_open(2) on the calling thread, and the
 * reasons a kernel or a machine refuses it, each worded with its remedy.
 * Depends on the C library and the kernel's perf interface only.
 */
#define _GNU_SOURCE
#include "instr_counter.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* kernel.perf_event_paranoid, or -100 when it cannot be read. */
static int paranoid_level(void)
{
    int level = -100;
    FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
    if (f) {
        if (fscanf(f, "%d", &level) != 1)
            level = -100;
        fclose(f);
    }
    return level;
}

static void explain(int err, char *why, size_t whylen)
{
    int level = paranoid_level();
    char lv[48] = "";
    if (level != -100)
        snprintf(lv, sizeof lv, " (kernel.perf_event_paranoid is %d)", level);
    switch (err) {
    case EACCES:
    case EPERM:
        snprintf(why, whylen,
                 "the kernel refuses this process the CPU's performance counters "
                 "(perf_event_open: %s)%s; allow them: as root, `sysctl "
                 "kernel.perf_event_paranoid=2` (user-mode counting of one's own processes), "
                 "or give the job CAP_PERFMON; in a container the seccomp profile must also "
                 "allow perf_event_open",
                 strerror(err), lv);
        break;
    case ENOENT:
    case ENODEV:
    case EOPNOTSUPP:
        snprintf(why, whylen,
                 "this machine exposes no hardware instruction counter (perf_event_open: %s), "
                 "as in virtual machines without a virtual PMU; run on a host that has one (a "
                 "KVM guest needs its CPU's PMU passed through, `-cpu host,pmu=on`)",
                 strerror(err));
        break;
    case ENOSYS:
        snprintf(why, whylen,
                 "the kernel has no performance events (perf_event_open: %s; "
                 "CONFIG_PERF_EVENTS)",
                 strerror(err));
        break;
    default:
        snprintf(why, whylen, "perf_event_open of the instruction counter failed: %s%s",
                 strerror(err), lv);
    }
}

int p2_instr_open(char *why, size_t whylen)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.type = PERF_TYPE_HARDWARE;
    a.size = sizeof a;
    a.config = PERF_COUNT_HW_INSTRUCTIONS;
    /* A test hook (emu/README.md, "Clocks"): the kernel's count of the
     * thread's CPU time in ns stands in for the instruction counter, so the
     * instructions clock's path can be tested where the CPU has no counter. */
    const char *stand_in = getenv("P2_INSTR_EVENT");
    if (stand_in && strcmp(stand_in, "task-clock") == 0) {
        a.type = PERF_TYPE_SOFTWARE;
        a.config = PERF_COUNT_SW_TASK_CLOCK;
    }
    a.exclude_kernel = 1; /* the program's instructions, not the kernel's work for it */
    a.exclude_hv = 1;
    /* this thread (pid 0), on any CPU; not its children, not the threads it creates */
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        explain(errno, why, whylen);
        return -1;
    }
    return fd;
}

int p2_instr_read(int fd, uint64_t *count)
{
    uint64_t v;
    if (read(fd, &v, sizeof v) != (ssize_t)sizeof v)
        return -1;
    *count = v;
    return 0;
}

int p2_instr_probe(char *why, size_t whylen)
{
    int fd = p2_instr_open(why, whylen);
    if (fd < 0)
        return 0;
    uint64_t before = 0, after = 0;
    volatile unsigned sink = 0;
    int ok = p2_instr_read(fd, &before) == 0;
    for (unsigned i = 0; i < 100000; i++)
        sink += i;
    ok = ok && p2_instr_read(fd, &after) == 0;
    close(fd);
    if (!ok || after <= before) {
        snprintf(why, whylen,
                 "the instruction counter opens but does not count (%s), as on virtual "
                 "machines whose PMU is not passed through; run on a host that counts",
                 ok ? "it stayed still over 100000 loop iterations" : "it cannot be read");
        return 0;
    }
    return 1;
}
