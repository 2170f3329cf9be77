/*
 * p2.c - rank identity and clock (p2.h), over the rank runtime.
 */
#include "p2.h"

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

static int in_region(const volatile uint64_t *addr, const p2_rt_memory *m)
{
    const uint8_t *p = (const uint8_t *)addr;
    return m->base && p >= m->base && p + sizeof(uint64_t) <= m->base + m->size;
}

tcaresult p2_wait_u64(const volatile uint64_t *addr, uint64_t value)
{
    p2_rt *rt = p2_rt_get();
    if (!rt)
        return TCA_ERROR_DEVICE;
    if (!addr || (uintptr_t)addr % sizeof(uint64_t) != 0)
        return TCA_ERROR_INVALID_ARGUMENT;
    if (!in_region(addr, &rt->host) && !in_region(addr, &rt->gpu))
        return TCA_ERROR_NOT_REGISTERED;
    P2_API_CALL();
    return p2_rt_wait_mem(rt, addr, ~0ull, value, 1) == P2_CHAN_OK ? TCA_SUCCESS : TCA_ERROR_DEVICE;
}
