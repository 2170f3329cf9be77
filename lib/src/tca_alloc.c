/*
 * tca_alloc.c - first-fit allocator with coalescing over an arena of offsets.
 *
 * The block table is an array sorted by offset that tiles the arena; a free
 * block never neighbours another free block. Allocation scans from the start
 * (first fit) and splits; free merges with both neighbours. Arenas hold few
 * live buffers, so linear scans are cheaper than any tree.
 */
#include "tca_alloc.h"

#include <stdlib.h>
#include <string.h>

static tca_arena_status arena_reserve(tca_arena *arena, size_t count)
{
    if (count <= arena->capacity)
        return TCA_ARENA_OK;
    size_t capacity = arena->capacity ? arena->capacity * 2 : 16;
    while (capacity < count)
        capacity *= 2;
    tca_arena_block *blocks = realloc(arena->blocks, capacity * sizeof *blocks);
    if (!blocks)
        return TCA_ARENA_NO_MEMORY;
    arena->blocks = blocks;
    arena->capacity = capacity;
    return TCA_ARENA_OK;
}

static void arena_remove(tca_arena *arena, size_t i)
{
    memmove(&arena->blocks[i], &arena->blocks[i + 1],
            (arena->count - i - 1) * sizeof arena->blocks[0]);
    arena->count--;
}

tca_arena_status tca_arena_init(tca_arena *arena, uint64_t size)
{
    tca_arena fresh = {.size = size & ~(uint64_t)(TCA_ARENA_ALIGN - 1)};
    if (fresh.size > 0) {
        tca_arena_status st = arena_reserve(&fresh, 1);
        if (st != TCA_ARENA_OK)
            return st;
        fresh.blocks[0] = (tca_arena_block){.offset = 0, .size = fresh.size, .used = 0};
        fresh.count = 1;
    }
    *arena = fresh;
    return TCA_ARENA_OK;
}

void tca_arena_fini(tca_arena *arena)
{
    free(arena->blocks);
    *arena = (tca_arena){0};
}

tca_arena_status tca_arena_alloc(tca_arena *arena, uint64_t size, uint64_t *offset)
{
    return tca_arena_alloc_aligned(arena, size, TCA_ARENA_ALIGN, offset);
}

tca_arena_status tca_arena_alloc_aligned(tca_arena *arena, uint64_t size, uint64_t align,
                                         uint64_t *offset)
{
    if (size == 0 || size > arena->size || align < TCA_ARENA_ALIGN || (align & (align - 1)))
        return TCA_ARENA_NO_SPACE;
    uint64_t need = (size + TCA_ARENA_ALIGN - 1) & ~(uint64_t)(TCA_ARENA_ALIGN - 1);
    for (size_t i = 0; i < arena->count; i++) {
        tca_arena_block *b = &arena->blocks[i];
        uint64_t pad = ((b->offset + align - 1) & ~(align - 1)) - b->offset;
        if (b->used || b->size < need || b->size - need < pad)
            continue;
        if (pad > 0) {
            /* The gap before the aligned start stays a free block of its own
             * (its left neighbour is used: free blocks never neighbour). */
            if (arena_reserve(arena, arena->count + 1) != TCA_ARENA_OK)
                return TCA_ARENA_NO_MEMORY;
            memmove(&arena->blocks[i + 1], &arena->blocks[i],
                    (arena->count - i) * sizeof arena->blocks[0]);
            arena->count++;
            arena->blocks[i].size = pad;
            arena->blocks[i + 1].offset += pad;
            arena->blocks[i + 1].size -= pad;
            i++;
            b = &arena->blocks[i];
        }
        if (b->size > need) {
            /* Split: the tail stays free. Reserve first, then re-take b. */
            if (arena_reserve(arena, arena->count + 1) != TCA_ARENA_OK)
                return TCA_ARENA_NO_MEMORY;
            b = &arena->blocks[i];
            memmove(&arena->blocks[i + 2], &arena->blocks[i + 1],
                    (arena->count - i - 1) * sizeof *b);
            arena->blocks[i + 1] = (tca_arena_block){
                .offset = b->offset + need, .size = b->size - need, .used = 0};
            arena->count++;
            b->size = need;
        }
        b->used = 1;
        b->flags = 0;
        *offset = b->offset;
        return TCA_ARENA_OK;
    }
    return TCA_ARENA_NO_SPACE;
}

tca_arena_status tca_arena_free(tca_arena *arena, uint64_t offset)
{
    size_t lo = 0, hi = arena->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (arena->blocks[mid].offset < offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == arena->count || arena->blocks[lo].offset != offset || !arena->blocks[lo].used)
        return TCA_ARENA_NOT_ALLOCATED;
    size_t i = lo;
    arena->blocks[i].used = 0;
    if (i + 1 < arena->count && !arena->blocks[i + 1].used) {
        arena->blocks[i].size += arena->blocks[i + 1].size;
        arena_remove(arena, i + 1);
    }
    if (i > 0 && !arena->blocks[i - 1].used) {
        arena->blocks[i - 1].size += arena->blocks[i].size;
        arena_remove(arena, i);
    }
    return TCA_ARENA_OK;
}

tca_arena_block *tca_arena_lookup(tca_arena *arena, uint64_t offset)
{
    /* The last block starting at or before offset. */
    size_t lo = 0, hi = arena->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (arena->blocks[mid].offset <= offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    tca_arena_block *b = &arena->blocks[lo - 1];
    return b->used && offset - b->offset < b->size ? b : NULL;
}

uint64_t tca_arena_used(const tca_arena *arena)
{
    uint64_t used = 0;
    for (size_t i = 0; i < arena->count; i++)
        if (arena->blocks[i].used)
            used += arena->blocks[i].size;
    return used;
}
