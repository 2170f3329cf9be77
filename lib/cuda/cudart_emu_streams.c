/*
 * cudart_emu_streams.c - the emulated runtime's streams and events
 * (cudart_emu.c): a stream is a timeline (its tail), an event the time of its
 * stream's tail when recorded; synchronising moves the rank's clock. Depends
 * on the common part (cudart_emu_internal.h).
 */
#define _GNU_SOURCE
#include "cudart_emu_internal.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "rt/rt.h"

/* ---- Streams --------------------------------------------------------------- */

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
    NEED_DEVICE();
    (void)rt;
    if (!pStream || (flags & ~(unsigned)cudaStreamNonBlocking))
        return ret(cudaErrorInvalidValue);
    emu_stream *s = calloc(1, sizeof *s);
    if (!s)
        return ret(cudaErrorMemoryAllocation);
    s->flags = flags;
    pthread_mutex_lock(&emu.lock);
    s->next = emu.streams;
    emu.streams = s;
    pthread_mutex_unlock(&emu.lock);
    *pStream = (cudaStream_t)s;
    return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
    return cudaStreamCreateWithFlags(pStream, cudaStreamDefault);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    NEED_DEVICE();
    (void)rt;
    pthread_mutex_lock(&emu.lock);
    emu_stream **link = &emu.streams, *s;
    while ((s = *link) && (cudaStream_t)s != stream)
        link = &s->next;
    if (s)
        *link = s->next;
    pthread_mutex_unlock(&emu.lock);
    /* Its queued work still completes: the device's time keeps it (cudaDeviceSynchronize
     * no longer sees it, as the real runtime lets the work finish in the background). */
    free(s);
    return s ? cudaSuccess : ret(cudaErrorInvalidResourceHandle);
}

/* The time stream `s` is idle at; *ok = 0 for a dead handle. */
static uint64_t stream_tail(cudaStream_t s, int *ok)
{
    pthread_mutex_lock(&emu.lock);
    emu_stream *st = stream_of(s, ok);
    uint64_t t = 0;
    if (*ok)
        t = st ? st->tail_ps : stream_ready(NULL, 0);
    pthread_mutex_unlock(&emu.lock);
    return t;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    NEED_DEVICE();
    p2_rt_enter(rt);
    int ok;
    uint64_t t = stream_tail(stream, &ok);
    if (ok)
        p2_rt_advance_to(rt, t);
    p2_rt_leave(rt);
    return ok ? cudaSuccess : ret(cudaErrorInvalidResourceHandle);
}

cudaError_t cudaStreamQuery(cudaStream_t stream)
{
    NEED_DEVICE();
    p2_rt_enter(rt);
    int ok;
    uint64_t t = stream_tail(stream, &ok);
    uint64_t now = p2_rt_clock_ps(rt);
    p2_rt_leave(rt);
    if (!ok)
        return ret(cudaErrorInvalidResourceHandle);
    return t <= now ? cudaSuccess : cudaErrorNotReady;
}

/* ---- Events ---------------------------------------------------------------- */

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    NEED_DEVICE();
    (void)rt;
    if (!event || (flags & ~(unsigned)(cudaEventBlockingSync | cudaEventDisableTiming |
                                       cudaEventInterprocess)))
        return ret(cudaErrorInvalidValue);
    emu_event *e = calloc(1, sizeof *e);
    if (!e)
        return ret(cudaErrorMemoryAllocation);
    e->flags = flags;
    pthread_mutex_lock(&emu.lock);
    e->next = emu.events;
    emu.events = e;
    pthread_mutex_unlock(&emu.lock);
    *event = (cudaEvent_t)e;
    return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    return cudaEventCreateWithFlags(event, cudaEventDefault);
}

/* Under emu.lock. */
static emu_event *event_of(cudaEvent_t ev)
{
    for (emu_event *x = emu.events; x; x = x->next)
        if ((cudaEvent_t)x == ev)
            return x;
    return NULL;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    NEED_DEVICE();
    cudaError_t r = cudaSuccess;
    p2_rt_enter(rt);
    pthread_mutex_lock(&emu.lock);
    emu_event *e = event_of(event);
    int ok;
    emu_stream *st = stream_of(stream, &ok);
    if (!e || !ok) {
        r = cudaErrorInvalidResourceHandle;
    } else {
        e->time_ps = stream_ready(st, p2_rt_clock_ps(rt));
        e->recorded = 1;
    }
    pthread_mutex_unlock(&emu.lock);
    p2_rt_leave(rt);
    return ret(r);
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    NEED_DEVICE();
    if (flags & ~(unsigned)cudaEventWaitExternal)
        return ret(cudaErrorInvalidValue);
    cudaError_t r = cudaSuccess;
    p2_rt_enter(rt);
    pthread_mutex_lock(&emu.lock);
    emu_event *e = event_of(event);
    int ok;
    emu_stream *st = stream_of(stream, &ok);
    if (!e || !ok) {
        r = cudaErrorInvalidResourceHandle;
    } else if (e->recorded) {
        /* Later work on the stream starts after the event's time (an event
         * never recorded is complete: nothing to wait for). */
        uint64_t t = stream_ready(st, p2_rt_clock_ps(rt));
        if (e->time_ps > t)
            stream_set_tail(st, e->time_ps);
    }
    pthread_mutex_unlock(&emu.lock);
    p2_rt_leave(rt);
    return ret(r);
}

/* *t = the event's time; *ok = 0 (unknown event) or -1 (never recorded). */
static uint64_t event_time(cudaEvent_t event, int *ok, unsigned *flags)
{
    pthread_mutex_lock(&emu.lock);
    emu_event *e = event_of(event);
    *ok = !e ? 0 : e->recorded ? 1 : -1;
    uint64_t t = e ? e->time_ps : 0;
    if (flags)
        *flags = e ? e->flags : 0;
    pthread_mutex_unlock(&emu.lock);
    return t;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    NEED_DEVICE();
    int ok;
    uint64_t t = event_time(event, &ok, NULL);
    if (!ok)
        return ret(cudaErrorInvalidResourceHandle);
    if (ok > 0) { /* an event never recorded is complete */
        p2_rt_enter(rt);
        p2_rt_advance_to(rt, t);
        p2_rt_leave(rt);
    }
    return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t event)
{
    NEED_DEVICE();
    int ok;
    uint64_t t = event_time(event, &ok, NULL);
    if (!ok)
        return ret(cudaErrorInvalidResourceHandle);
    p2_rt_enter(rt);
    uint64_t now = p2_rt_clock_ps(rt);
    p2_rt_leave(rt);
    return ok < 0 || t <= now ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    NEED_DEVICE();
    if (!ms)
        return ret(cudaErrorInvalidValue);
    int ok0, ok1;
    unsigned f0, f1;
    uint64_t t0 = event_time(start, &ok0, &f0), t1 = event_time(end, &ok1, &f1);
    if (ok0 <= 0 || ok1 <= 0 || ((f0 | f1) & cudaEventDisableTiming))
        return ret(cudaErrorInvalidResourceHandle);
    p2_rt_enter(rt);
    uint64_t now = p2_rt_clock_ps(rt);
    p2_rt_leave(rt);
    if (t0 > now || t1 > now)
        return ret(cudaErrorNotReady);
    *ms = (float)(((double)t1 - (double)t0) * 1e-9);
    return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    NEED_DEVICE();
    (void)rt;
    pthread_mutex_lock(&emu.lock);
    emu_event **link = &emu.events, *e;
    while ((e = *link) && (cudaEvent_t)e != event)
        link = &e->next;
    if (e)
        *link = e->next;
    pthread_mutex_unlock(&emu.lock);
    free(e);
    return e ? cudaSuccess : ret(cudaErrorInvalidResourceHandle);
}
