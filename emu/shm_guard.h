/*
 * shm_guard.h - surviving a shared mapping that another process shrinks.
 *
 * Every process of a job can resize the job's shared-memory objects
 * (ftruncate), and touching a mapping past the object's new end raises SIGBUS.
 * p2run and the simulator must outlive such a rank to end the job and clean up,
 * so each registers its mappings here: on SIGBUS inside one, the whole
 * mapping is replaced by private zero pages (the faulting access then
 * completes on them) and the object is reported lost; the caller ends the job
 * at its next look. A SIGBUS anywhere else stays fatal.
 *
 * The same SIGBUS comes when a page of an object cannot be had at all: the
 * objects are sparse files in /dev/shm, and a full /dev/shm (64 MB in many
 * containers) refuses the next page. p2_shm_full tells the two apart.
 */
#ifndef P2_EMU_SHM_GUARD_H
#define P2_EMU_SHM_GUARD_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Guards [base, base + bytes), the mapping of shm object `name`. Returns 0, or
 * -1 when the table is full (the mapping is then unguarded). */
int p2_shm_guard(void *base, size_t bytes, const char *name);
/* The name of the first guarded object that shrank, or NULL. */
const char *p2_shm_guard_lost(void);
/* Whether /dev/shm, where the job's memory lies, has less than a page or so
 * left: 1 with `why` saying how much it holds, else 0. */
int p2_shm_full(char *why, size_t whylen);
/* The bytes /dev/shm holds in all (0 if it cannot tell). */
unsigned long long p2_shm_size(void);

#ifdef __cplusplus
}
#endif

#endif /* P2_EMU_SHM_GUARD_H */
