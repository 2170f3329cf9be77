/*
 * instr_counter.h - a thread's count of retired user-mode instructions, from
 * the CPU's performance counters through perf_event_open(2)
 * (PERF_COUNT_HW_INSTRUCTIONS, kernel and hypervisor excluded): what
 * `--clock instructions` charges (emu/README.md, "Clocks"). p2run probes it
 * before a job starts; the rank runtime opens one per thread that uses the
 * libraries. P2_INSTR_EVENT=task-clock in the environment makes it count the
 * thread's CPU time in ns instead (PERF_COUNT_SW_TASK_CLOCK): a test hook for
 * machines without the counter, never a clock to use. Depends on the C
 * library and the kernel's perf interface only.
 */
#ifndef P2_INSTR_COUNTER_H
#define P2_INSTR_COUNTER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opens the calling thread's counter (counting from now, this thread only,
 * closed on exec). Returns its file descriptor, or -1 with a sentence in
 * `why` naming the reason and the remedy ("the kernel refuses ...:
 * kernel.perf_event_paranoid is 3 ...; as root: sysctl ..."). */
int p2_instr_open(char *why, size_t whylen);

/* The instructions counted so far on `fd`: 0, or -1 when it cannot be read. */
int p2_instr_read(int fd, uint64_t *count);

/* Whether this process may count its instructions: opens a counter, runs a
 * short loop and checks that the counter moved. 1, or 0 with the reason and
 * the remedy in `why`. */
int p2_instr_probe(char *why, size_t whylen);

#ifdef __cplusplus
}
#endif

#endif /* P2_INSTR_COUNTER_H */
