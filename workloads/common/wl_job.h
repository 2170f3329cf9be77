/*
 * wl_job.h - for drivers that run jobs under p2run (p2bench, the validation
 * suite): where this program lives, running a command with its output in a
 * file, and showing the end of that file when the command failed.
 */
#ifndef WL_JOB_H
#define WL_JOB_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The folder this program is in (from /proc/self/exe); 0, or -1. */
int wl_self_dir(char *out, size_t size);
/* Whether `path` is a regular file this process may execute. */
int wl_executable(const char *path);
/* Host seconds, monotonic. */
double wl_now_s(void);
/* The last `lines` lines of a file, on stderr, under a header naming it. */
void wl_show_tail(const char *path, int lines);

/* Runs argv[0] with argv, its stdout and stderr into `log`, and waits. Sets
 * *wall_s, *peak_rss_kib (the largest resident set of it and every
 * descendant it reaped: wait4's ru_maxrss) and, if cpu_s is not NULL, *cpu_s
 * (user + system CPU time of it and those descendants). Returns its exit
 * status (128 + n for signal n), or -1 (with a message naming `who`) if it
 * could not start. */
int wl_run_job(const char *who, char *const *argv, const char *log, double *wall_s,
               long *peak_rss_kib, double *cpu_s);
/* The same, and *job_pss_kib: the largest total memory of the whole job seen,
 * the proportional set sizes (a shared page split among the processes that
 * map it, so counted once) of it and all its descendants summed, sampled
 * 50 ms after the start, then at gaps that double up to a second. */
int wl_run_job_sampled(const char *who, char *const *argv, const char *log, double *wall_s,
                       long *peak_rss_kib, double *cpu_s, long *job_pss_kib);

#ifdef __cplusplus
}
#endif

#endif /* WL_JOB_H */
