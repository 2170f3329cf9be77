/*
 * wl_job.c - running jobs under p2run for the drivers (wl_job.h).
 */
#define _GNU_SOURCE
#include "wl_job.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int wl_self_dir(char *out, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", out, size - 1);
    if (n <= 0)
        return -1;
    out[n] = '\0';
    char *slash = strrchr(out, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    return 0;
}

int wl_executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

double wl_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void wl_show_tail(const char *path, int lines)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char *text = NULL;
    size_t size = 0;
    ssize_t n = getdelim(&text, &size, '\0', f); /* the whole file */
    fclose(f);
    if (n <= 0) {
        free(text);
        return;
    }
    const char *start = text + n;
    if (start[-1] == '\n')
        start--; /* the last line's own newline */
    for (int seen = 0; start > text; start--)
        if (start[-1] == '\n' && ++seen == lines)
            break;
    fprintf(stderr, "---- %s (last %d lines) ----\n%s", path, lines, start);
    if (text[n - 1] != '\n')
        fputc('\n', stderr);
    free(text);
}

/* The sum of the proportional set sizes of `root` and its descendants, in
 * KiB (processes that end while it reads are left out). */
static long tree_pss_kib(pid_t root)
{
    DIR *proc = opendir("/proc");
    if (!proc)
        return 0;
    size_t n = 0, cap = 0;
    pid_t *pid = NULL, *parent = NULL;
    for (struct dirent *e; (e = readdir(proc));) {
        char *end;
        long p = strtol(e->d_name, &end, 10);
        if (*end || p <= 0)
            continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/%ld/stat", p);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        char line[512];
        const char *close = fgets(line, sizeof line, f) ? strrchr(line, ')') : NULL;
        fclose(f);
        int ppid;
        if (!close || sscanf(close + 1, " %*c %d", &ppid) != 1)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 256;
            pid = realloc(pid, cap * sizeof *pid);
            parent = realloc(parent, cap * sizeof *parent);
            if (!pid || !parent)
                break;
        }
        pid[n] = (pid_t)p;
        parent[n++] = (pid_t)ppid;
    }
    closedir(proc);
    /* The tree: grow the set of members until no process joins. */
    unsigned char *in = calloc(n ? n : 1, 1);
    for (int grew = 1; grew && in;) {
        grew = 0;
        for (size_t a = 0; a < n; a++) {
            if (in[a])
                continue;
            int member = pid[a] == root;
            for (size_t b = 0; b < n && !member; b++)
                member = in[b] && parent[a] == pid[b];
            if (member)
                in[a] = 1, grew = 1;
        }
    }
    long total = 0;
    for (size_t a = 0; a < n && in; a++) {
        if (!in[a])
            continue;
        char path[64], line[256];
        snprintf(path, sizeof path, "/proc/%d/smaps_rollup", (int)pid[a]);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        long kib;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "Pss: %ld kB", &kib) == 1)
                total += kib;
        fclose(f);
    }
    free(in);
    free(pid);
    free(parent);
    return total;
}

int wl_run_job(const char *who, char *const *argv, const char *log, double *wall_s,
               long *peak_rss_kib, double *cpu_s)
{
    return wl_run_job_sampled(who, argv, log, wall_s, peak_rss_kib, cpu_s, NULL);
}

int wl_run_job_sampled(const char *who, char *const *argv, const char *log, double *wall_s,
                       long *peak_rss_kib, double *cpu_s, long *job_pss_kib)
{
    fflush(stdout);
    fflush(stderr);
    sigset_t chld, before;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, &before);
    double start = wl_now_s();
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "%s: fork: %s\n", who, strerror(errno));
        sigprocmask(SIG_SETMASK, &before, NULL);
        return -1;
    }
    if (pid == 0) {
        sigprocmask(SIG_SETMASK, &before, NULL);
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) {
            fprintf(stderr, "%s: cannot write '%s': %s\n", who, log, strerror(errno));
            _exit(127);
        }
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        close(fd);
        execv(argv[0], argv);
        fprintf(stderr, "%s: cannot run '%s': %s\n", who, argv[0], strerror(errno));
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (job_pss_kib)
        *job_pss_kib = 0;
    int gap_ms = 50;
    for (;;) {
        pid_t got = wait4(pid, &status, job_pss_kib ? WNOHANG : 0, &ru);
        if (got == 0) {
            /* Still running: a sleep that the job's end (SIGCHLD, blocked
             * so it waits here) cuts short, then a sample. The sleeps
             * double from 50 ms to a second, so short jobs are seen too. */
            const struct timespec pause = {gap_ms / 1000, (long)(gap_ms % 1000) * 1000000L};
            if (sigtimedwait(&chld, NULL, &pause) < 0) {
                long now = tree_pss_kib(pid);
                if (now > *job_pss_kib)
                    *job_pss_kib = now;
            }
            gap_ms = gap_ms * 2 > 1000 ? 1000 : gap_ms * 2;
            continue;
        }
        if (got == pid)
            break;
        if (got < 0 && errno != EINTR) {
            fprintf(stderr, "%s: wait4: %s\n", who, strerror(errno));
            sigprocmask(SIG_SETMASK, &before, NULL);
            return -1;
        }
    }
    *wall_s = wl_now_s() - start;
    sigprocmask(SIG_SETMASK, &before, NULL);
    *peak_rss_kib = ru.ru_maxrss;
    if (cpu_s)
        *cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
                 (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
}
