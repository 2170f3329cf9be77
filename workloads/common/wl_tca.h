/*
 * wl_tca.h - checking TCA calls in workloads: every call is wrapped, and a
 * failure ends the rank with WL_EXIT_FAILURE after naming the call, the rank
 * and tcaGetErrorString (p2run then ends the job with that status).
 *
 *   WL_TCA(tcaMalloc(&p, size, tcaMemoryCPU));
 */
#ifndef WL_TCA_H
#define WL_TCA_H

#include "tca-api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Returns if `result` is TCA_SUCCESS; otherwise prints
 * "PROGRAM: rank R: CALL failed: ERROR (FILE:LINE)" and exits. */
void wl_tca_check(tcaresult result, const char *call, const char *file, int line);

#define WL_TCA(call) wl_tca_check((call), #call, __FILE__, __LINE__)

/* The program name in messages: "workload" until a workload sets its own. */
void wl_set_program_name(const char *name);
const char *wl_program_name(void);

#ifdef __cplusplus
}
#endif

#endif /* WL_TCA_H */
