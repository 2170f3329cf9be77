/*
 * p2.c - rank identity and clock (p2.h), over the rank runtime: waits and
 * tests on memory words, and the rank's lock in simulated-time order (the
 * simulator's P2_CHAN_LOCK, model/sim/frontend.h).
 */
#include "p2.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#include "p2_params.h"
#include "rt/api.h"
#include "rt/rt.h"

int p2_rank(void)
{
    p2_rt *rt = p2_rt_get();
    return rt ? rt->rank : -1;
}

int p2_size(void)
{
    p2_rt *rt = p2_rt_get();
    return rt ? rt->size : 0;
}

double p2_wtime(void) { return p2_rt_wtime(); }

void p2_compute(double seconds) { p2_rt_compute(seconds); }

double p2_param(const char *name)
{
    if (!name)
        return NAN;
    /* Without p2run there is no job segment: params.def's defaults. */
    p2_rt *rt = p2_rt_get();
#define P2_PARAM(pname, def, min, max, unit, scope, layer, meaning, source) \
    P2_IF_RANK_##scope(if (strcmp(name, #pname) == 0) return rt ? rt->prm.pname : (def);)
#include "params.def"
#undef P2_PARAM
    return NAN;
}

static int in_region(const volatile uint64_t *addr, const p2_rt_memory *m)
{
    const uint8_t *p = (const uint8_t *)addr;
    return m->base && p >= m->base && p + sizeof(uint64_t) <= m->base + m->size;
}

/* p2_wait_u64 (block) and p2_test_u64 (not). */
static tcaresult wait_word(const volatile uint64_t *addr, uint64_t value, int block)
{
    p2_rt *rt = p2_rt_get();
    if (!rt)
        return TCA_ERROR_DEVICE;
    if (!addr || (uintptr_t)addr % sizeof(uint64_t) != 0)
        return TCA_ERROR_INVALID_ARGUMENT;
    if (!in_region(addr, &rt->host) && !in_region(addr, &rt->gpu))
        return TCA_ERROR_NOT_REGISTERED;
    P2_API_CALL();
    switch (p2_rt_wait_mem(rt, addr, ~0ull, value, block)) {
    case P2_CHAN_OK: return TCA_SUCCESS;
    case P2_CHAN_NOT_YET: return TCA_NOT_YET;
    default: return TCA_ERROR_DEVICE;
    }
}

tcaresult p2_wait_u64(const volatile uint64_t *addr, uint64_t value)
{
    return wait_word(addr, value, 1);
}

tcaresult p2_test_u64(const volatile uint64_t *addr, uint64_t value)
{
    return wait_word(addr, value, 0);
}

/* Without p2run the lock is this mutex. */
static pthread_mutex_t host_lock = PTHREAD_MUTEX_INITIALIZER;

tcaresult p2_lock(void)
{
    p2_rt *rt = p2_rt_get();
    if (!rt)
        return pthread_mutex_lock(&host_lock) == 0 ? TCA_SUCCESS : TCA_ERROR_DEVICE;
    P2_API_CALL();
    p2_chan_req req = {.op = P2_CHAN_LOCK};
    p2_chan_resp resp;
    p2_rt_enter(rt);
    int rc = p2_rt_call(rt, &req, &resp);
    if (rc == 0 && resp.status == P2_CHAN_OK)
        p2_rt_advance_to(rt, resp.time_ps); /* it waited for another thread to give it back */
    p2_rt_leave(rt);
    return rc == 0 && resp.status == P2_CHAN_OK ? TCA_SUCCESS : TCA_ERROR_DEVICE;
}

tcaresult p2_unlock(void)
{
    p2_rt *rt = p2_rt_get();
    if (!rt)
        return pthread_mutex_unlock(&host_lock) == 0 ? TCA_SUCCESS : TCA_ERROR_DEVICE;
    P2_API_CALL();
    p2_chan_req req = {.op = P2_CHAN_UNLOCK};
    p2_rt_enter(rt);
    int rc = p2_rt_post(rt, &req);
    p2_rt_leave(rt);
    return rc == 0 ? TCA_SUCCESS : TCA_ERROR_DEVICE;
}
