/*
 * api.h - marks a public library call for the rank runtime (rt.h,
 * p2_rt_api_begin/end): the first statement of every public call that
 * reaches a device is P2_API_CALL(); the mark ends when the call returns,
 * whatever path it takes. Under --clock=cpu the runtime then charges the
 * program's CPU time between calls, never the emulation's work inside them.
 */
#ifndef P2_RT_API_H
#define P2_RT_API_H

#ifdef __cplusplus
extern "C" {
#endif

void p2_rt_api_begin(void);
void p2_rt_api_begin_call(const char *call); /* naming it, for the stall diagnosis */
void p2_rt_api_end(void);

static inline void p2_api_call_end_(int *unused)
{
    (void)unused;
    p2_rt_api_end();
}

#define P2_API_CALL()                                                         \
    __attribute__((cleanup(p2_api_call_end_), unused)) int p2_api_call_mark_ = \
        (p2_rt_api_begin_call(__func__), 0)

#ifdef __cplusplus
}
#endif

#endif /* P2_RT_API_H */
