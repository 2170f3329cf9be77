/*
 * arena.h - the DMA-able memories of one node as shared-memory objects: the
 * host memory registered with the library and the GPU memory, mapped by the
 * simulator (whose model reads and writes the real bytes when a TLP lands) and
 * by the rank running on that node (whose CPU reads and writes them directly).
 *
 * Names: "<job name>-n<node>-host" and "<job name>-n<node>-gpu". The objects
 * are sparse: pages cost memory only once touched.
 */
#ifndef P2_EMU_ARENA_H
#define P2_EMU_ARENA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum p2_arena_kind { P2_ARENA_HOST = 0, P2_ARENA_GPU = 1 } p2_arena_kind;

typedef struct p2_arena {
    uint8_t *base;
    uint64_t size;
} p2_arena;

void p2_arena_name(const char *job_name, unsigned node, p2_arena_kind kind, char *out,
                   size_t outlen);
/* Simulator: creates (replacing a stale one) and maps. Returns 0, or -1 with a
 * message in err. */
int p2_arena_create(const char *job_name, unsigned node, p2_arena_kind kind, uint64_t size,
                    p2_arena *out, char *err, size_t errlen);
/* Rank: maps an arena the simulator created. Returns 0, or -1 with a message. */
int p2_arena_map(const char *job_name, unsigned node, p2_arena_kind kind, uint64_t size,
                 p2_arena *out, char *err, size_t errlen);
void p2_arena_unmap(p2_arena *a);
/* The bus address of an arena's first byte in the cluster's global address
 * map (peach2_hw.h): where the node's devices reach it. */
uint64_t p2_arena_bus_base(unsigned node, p2_arena_kind kind);
/* Removes the name (mappings stay valid). */
void p2_arena_unlink(const char *job_name, unsigned node, p2_arena_kind kind);

#ifdef __cplusplus
}
#endif

#endif /* P2_EMU_ARENA_H */
