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

#ifdef __cplusplus
}
#endif

#endif /* P2_EMU_SHM_GUARD_H */
