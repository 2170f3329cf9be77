/*
 * p2_params.h - the rank parameters as the job segment carries them: one
 * field per RANK-scope row of params.def, generated from it, in the units the
 * row declares (ns, GB/s, bytes). The simulator fills the struct from the
 * parameter file (model/sim/p2sim.cc), the rank runtime copies it once at
 * attach (lib/src/rt/rt_emu.c), and each layer reads its own rows where it
 * charges them (params.def's layer column says which). Adding a RANK row to
 * params.def is all it takes for every rank to see it.
 *
 * The conversions below are the only ones: the simulator and the ranks
 * turn the same double into the same picoseconds.
 */
#ifndef P2_PARAMS_H
#define P2_PARAMS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bounds several rows of params.def share (the reasons are there). */
#define P2_MAX_TIME_NS 1e6              /* 1 ms */
#define P2_MAX_CYCLES 1e4
#define P2_MIN_MEMORY_BYTES 1048576.0   /* 1 MiB */
#define P2_MAX_PIO_STORE_BYTES 448.0    /* P2_CHAN_DATA_BYTES (p2_job.h) */

/* P2_IF_RANK_##scope(x): x for a RANK row, nothing for the model's own rows.
 * With it a P2_PARAM definition picks the rows the ranks see. */
#define P2_IF_RANK_RANK(x) x
#define P2_IF_RANK_LINK(x)
#define P2_IF_RANK_CHIP(x)
#define P2_IF_RANK_HOST(x)
#define P2_IF_RANK_IB(x)
#define P2_IF_RANK_SR8000(x)

typedef struct p2_rank_params {
#define P2_PARAM(name, def, min, max, unit, scope, layer, meaning, source) \
    P2_IF_RANK_##scope(double name;)
#include "params.def"
#undef P2_PARAM
} p2_rank_params;

/* The first rank parameter outside its range in params.def (a NaN is), or
 * NULL: a rank checks what it copies from the job segment, which every
 * process of the job can write. */
static inline const char *p2_rank_params_invalid(const p2_rank_params *p)
{
#define P2_PARAM(name, def, min, max, unit, scope, layer, meaning, source) \
    P2_IF_RANK_##scope(if (!(p->name >= (min) && p->name <= (max))) return #name;)
#include "params.def"
#undef P2_PARAM
    return NULL;
}

/* A time in nanoseconds (a parameter's unit) in picoseconds (the clocks'),
 * rounded to the nearest. */
static inline uint64_t p2_ns_ps(double ns)
{
    return (uint64_t)llround(ns * 1000.0);
}

/* A rate in GB/s (a parameter's unit) in bytes per second. */
static inline double p2_gbps_Bps(double gbps)
{
    return gbps * 1e9;
}

#ifdef __cplusplus
}
#endif

#endif /* P2_PARAMS_H */
