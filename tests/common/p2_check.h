/*
 * p2_check.h - how the C test programs that run as ranks (under p2run, with
 * its own launcher or mpirun) check and fail: one definition for all of
 * them (tests/ranks, tests/emu, tests/mpi).
 *
 *   CHECK(call)         a TCA call must return TCA_SUCCESS
 *   REQUIRE(cond)       a condition must hold; counted in p2_check_count
 *   EXPECT(cond, ...)   a soft check: on failure a message (printf format)
 *                       and p2_check_failures + 1; the program goes on and
 *                       reports at its end
 *
 * A failed CHECK or REQUIRE prints "rank R: FAIL: what (FILE:LINE)" on
 * stderr and ends the rank with status 1 (p2run then ends the job):
 * exit(1), or P2_CHECK_END() where the program defines it before including
 * this header (an MPI program: MPI_Abort(MPI_COMM_WORLD, 1), so that an
 * mpirun launch ends too).
 *
 * The rank in messages is p2_rank(). A plain MPI program, built without the
 * TCA library, defines P2_CHECK_RANK() (its MPI rank) before including this
 * header; it then has no CHECK.
 *
 * Header only: static inline functions, and the two counters as weak
 * definitions, so a program of several files has one of each.
 */
#ifndef P2_CHECK_H
#define P2_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef P2_CHECK_RANK
#include "p2.h"
#include "tca-api.h"
#define P2_CHECK_RANK() p2_rank()
#define P2_CHECK_TCA 1
#endif

#ifndef P2_CHECK_END
#define P2_CHECK_END() exit(1)
#endif

/* EXPECT's failures so far; REQUIRE's checks so far: one of each per
 * program (weak definitions, which the linker merges across its files). */
int p2_check_failures __attribute__((weak)), p2_check_count __attribute__((weak));

/* "rank R: FAIL: <format...> (FILE:LINE)" on stderr. */
static inline void p2_check_say(const char *file, int line, const char *format, va_list ap)
{
    fprintf(stderr, "rank %d: FAIL: ", (int)(P2_CHECK_RANK()));
    vfprintf(stderr, format, ap);
    fprintf(stderr, " (%s:%d)\n", file, line);
}

static inline void p2_check_report(const char *file, int line, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static inline void p2_check_report(const char *file, int line, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    p2_check_say(file, line, format, ap);
    va_end(ap);
}

/* Says why and ends the rank. */
static inline void p2_check_fail(const char *file, int line, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static inline void p2_check_fail(const char *file, int line, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    p2_check_say(file, line, format, ap);
    va_end(ap);
    fflush(stdout);
    P2_CHECK_END();
    exit(1); /* P2_CHECK_END does not return */
}

#define REQUIRE(cond)                                                                    \
    do {                                                                                 \
        p2_check_count++;                                                                \
        if (!(cond))                                                                     \
            p2_check_fail(__FILE__, __LINE__, "%s", #cond);                              \
    } while (0)

#define EXPECT(cond, ...)                                                                \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            p2_check_failures++;                                                         \
            p2_check_report(__FILE__, __LINE__, __VA_ARGS__);                            \
        }                                                                                \
    } while (0)

#ifdef P2_CHECK_TCA
#define CHECK(call)                                                                      \
    do {                                                                                 \
        tcaresult p2_check_r_ = (call);                                                  \
        if (p2_check_r_ != TCA_SUCCESS)                                                  \
            p2_check_fail(__FILE__, __LINE__, "%s: %s", #call,                           \
                          tcaGetErrorString(p2_check_r_));                               \
    } while (0)
#endif

#endif /* P2_CHECK_H */
