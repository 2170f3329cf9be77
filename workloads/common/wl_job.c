/*
 * wl_job.c - running jobs under p2run for the drivers (wl_job.h).
 */
#define _GNU_SOURCE
#include "wl_job.h"

#include <errno.h>
#include <fcntl.h>
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

int wl_run_job(const char *who, char *const *argv, const char *log, double *wall_s,
               long *peak_rss_kib, double *cpu_s)
{
    fflush(stdout);
    fflush(stderr);
    double start = wl_now_s();
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "%s: fork: %s\n", who, strerror(errno));
        return -1;
    }
    if (pid == 0) {
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
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "%s: wait4: %s\n", who, strerror(errno));
            return -1;
        }
    }
    *wall_s = wl_now_s() - start;
    *peak_rss_kib = ru.ru_maxrss;
    if (cpu_s)
        *cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
                 (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
}
