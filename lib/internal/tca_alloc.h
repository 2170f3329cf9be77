/*
 * tca_alloc.h - first-fit allocator over one registered arena (tcaMalloc, GPU
 * memory, descriptor memory). It hands out offsets, not pointers, so the same
 * code serves host and GPU arenas and is testable without a device.
 *
 * Deterministic: the same calls give the same offsets in every run, which
 * keeps PCIe addresses, and so simulated timings, reproducible.
 */
#ifndef TCA_ALLOC_H
#define TCA_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every block starts and ends on this boundary: a cache line, so DMA buffers
 * never share a line and descriptors (64 bytes) never straddle one. */
#define TCA_ARENA_ALIGN 64u

typedef enum tca_arena_status {
    TCA_ARENA_OK = 0,
    TCA_ARENA_NO_SPACE = 1,      /* no free block large enough */
    TCA_ARENA_NO_MEMORY = 2,     /* the process heap is full (block table) */
    TCA_ARENA_NOT_ALLOCATED = 3  /* free of an offset that starts no live block */
} tca_arena_status;

/* One block: free or used. Blocks tile [0, size) in offset order. */
typedef struct tca_arena_block {
    uint64_t offset;
    uint64_t size;
    int used;
    unsigned flags; /* the user's, on a used block; 0 when allocated */
} tca_arena_block;

typedef struct tca_arena {
    uint64_t size; /* usable bytes: the arena rounded down to TCA_ARENA_ALIGN */
    tca_arena_block *blocks;
    size_t count, capacity;
} tca_arena;

/* An arena of `size` bytes, all free. TCA_ARENA_NO_MEMORY. */
tca_arena_status tca_arena_init(tca_arena *arena, uint64_t size);
void tca_arena_fini(tca_arena *arena);

/* *offset = the first free block that fits `size` (> 0) bytes rounded up to
 * TCA_ARENA_ALIGN. TCA_ARENA_NO_SPACE, TCA_ARENA_NO_MEMORY. */
tca_arena_status tca_arena_alloc(tca_arena *arena, uint64_t size, uint64_t *offset);
/* The same, starting at a multiple of `align` (a power of two, at least
 * TCA_ARENA_ALIGN); the gap before it stays free. */
tca_arena_status tca_arena_alloc_aligned(tca_arena *arena, uint64_t size, uint64_t align,
                                         uint64_t *offset);

/* Frees the block starting at `offset`, merging it with free neighbours.
 * TCA_ARENA_NOT_ALLOCATED. */
tca_arena_status tca_arena_free(tca_arena *arena, uint64_t offset);

/* The used block containing `offset`, or NULL. Valid until the next alloc
 * or free. */
tca_arena_block *tca_arena_lookup(tca_arena *arena, uint64_t offset);

/* Bytes in used blocks (rounded sizes). */
uint64_t tca_arena_used(const tca_arena *arena);

#ifdef __cplusplus
}
#endif

#endif /* TCA_ALLOC_H */
