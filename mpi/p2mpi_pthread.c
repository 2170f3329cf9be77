/*
 * p2mpi_pthread.c - the program's threads under MPI_THREAD_SERIALIZED and
 * MULTIPLE: the layer, preloaded ahead of every other library, defines
 * pthread_create, pthread_join, pthread_cond_wait, pthread_cond_signal and
 * pthread_cond_broadcast, and hands them to the rank runtime's interposers
 * (rt/rt.h, p2_rt_pthread_*) with the caller's address, once MPI_Init_thread
 * has granted a level at which other threads than main call MPI. Depends on
 * the rank's state (p2mpi.h) and the runtime.
 *
 * A program built with mpicc does not link the runtime's library itself: it
 * is loaded as the layer's dependency, after the C library in the lookup
 * order, so without this the C library's pthread calls would run and the
 * program's threads would get no lane of their own when created (they would
 * take one at their first call, when host timing decides its clock), nor
 * park in pthread_cond_wait or pthread_join (a thread asleep there would
 * hold its rank's time, and the other threads' calls with it: README.md,
 * "Threads"). Before such a level is granted, and in programs that ask for
 * less (FUNNELED at most), the calls are the ones the program would get
 * without the layer: the runtime's when the program links it (it is next in
 * the lookup order then), the C library's otherwise, so that single-threaded
 * MPI programs, and the threads of their libraries (a BLAS's workers), run
 * as before.
 */
#define _GNU_SOURCE
#include "p2mpi.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
typedef int (*join_fn)(pthread_t, void **);
typedef int (*cond_wait_fn)(pthread_cond_t *, pthread_mutex_t *);
typedef int (*cond_wake_fn)(pthread_cond_t *);

/* The definition the program would call without the layer (the next in the
 * lookup order), looked up once; and whether that is the runtime's. */
static void *next_fn(void **slot, const char *name)
{
    void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (f)
        return f;
    f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "p2mpi: cannot find %s after the MPI layer: %s\n", name, dlerror());
        abort();
    }
    __atomic_store_n(slot, f, __ATOMIC_RELEASE);
    return f;
}
static void *next_create, *next_join, *next_cond_wait, *next_cond_signal, *next_cond_broadcast;
#define NEXT(name, type) ((type)next_fn(&next_##name, "pthread_" #name))

static int runtime_is_next(void)
{
    static int known, is;
    if (!__atomic_load_n(&known, __ATOMIC_ACQUIRE)) {
        Dl_info info;
        const char *base = NULL;
        if (dladdr((void *)NEXT(create, create_fn), &info) && info.dli_fname) {
            base = strrchr(info.dli_fname, '/');
            base = base ? base + 1 : info.dli_fname;
        }
        __atomic_store_n(&is, base && !strncmp(base, "libp2tca", 8), __ATOMIC_RELAXED);
        __atomic_store_n(&known, 1, __ATOMIC_RELEASE);
    }
    return __atomic_load_n(&is, __ATOMIC_RELAXED);
}

/* The runtime's interposers: under MPI_THREAD_SERIALIZED or MULTIPLE, or in
 * a program that links the runtime (which would call them anyway, with its
 * own address as the caller's, which only they may see here). */
static int runtime_threads(void)
{
    return __atomic_load_n(&E.thread_level, __ATOMIC_ACQUIRE) >= MPI_THREAD_SERIALIZED ||
           runtime_is_next();
}

#pragma GCC visibility push(default)

int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    if (runtime_threads())
        return p2_rt_pthread_create(t, attr, fn, arg, __builtin_return_address(0));
    return NEXT(create, create_fn)(t, attr, fn, arg);
}

int pthread_join(pthread_t t, void **ret)
{
    if (runtime_threads())
        return p2_rt_pthread_join(t, ret, __builtin_return_address(0));
    return NEXT(join, join_fn)(t, ret);
}

int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    if (runtime_threads())
        return p2_rt_pthread_cond_wait(c, m, __builtin_return_address(0));
    return NEXT(cond_wait, cond_wait_fn)(c, m);
}

int pthread_cond_signal(pthread_cond_t *c)
{
    if (runtime_threads())
        return p2_rt_pthread_cond_wake(c, 0);
    return NEXT(cond_signal, cond_wake_fn)(c);
}

int pthread_cond_broadcast(pthread_cond_t *c)
{
    if (runtime_threads())
        return p2_rt_pthread_cond_wake(c, 1);
    return NEXT(cond_broadcast, cond_wake_fn)(c);
}

#pragma GCC visibility pop
