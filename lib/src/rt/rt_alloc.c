/*
 * rt_alloc.c - the process's GPU memory pool (rt_alloc.h): a tca_arena under
 * a mutex, bound to the memory its users name.
 */
#include "rt/rt_alloc.h"

#include <pthread.h>

#include "tca_alloc.h"

static struct {
    pthread_mutex_t lock;
    uint8_t *base;
    uint64_t size;
    unsigned users;
    tca_arena arena;
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER};

static p2_rt_alloc_status from_arena(tca_arena_status st)
{
    switch (st) {
    case TCA_ARENA_OK: return P2_RT_ALLOC_OK;
    case TCA_ARENA_NO_SPACE: return P2_RT_ALLOC_NO_SPACE;
    case TCA_ARENA_NO_MEMORY: return P2_RT_ALLOC_NO_MEMORY;
    case TCA_ARENA_NOT_ALLOCATED: return P2_RT_ALLOC_NOT_ALLOCATED;
    }
    return P2_RT_ALLOC_NOT_ALLOCATED;
}

static void empty_locked(void)
{
    tca_arena_fini(&pool.arena);
    pool.base = NULL;
    pool.size = 0;
}

p2_rt_alloc_status p2_rt_gpu_bind(uint8_t *base, uint64_t size, unsigned user)
{
    p2_rt_alloc_status st = P2_RT_ALLOC_OK;
    pthread_mutex_lock(&pool.lock);
    if (pool.base != base || pool.size != size) {
        empty_locked();
        st = from_arena(tca_arena_init(&pool.arena, base ? size : 0));
        if (st == P2_RT_ALLOC_OK) {
            pool.base = base;
            pool.size = base ? size : 0;
        }
        pool.users = 0;
    }
    if (st == P2_RT_ALLOC_OK)
        pool.users |= user;
    pthread_mutex_unlock(&pool.lock);
    return st;
}

void p2_rt_gpu_unbind(unsigned user)
{
    pthread_mutex_lock(&pool.lock);
    pool.users &= ~user;
    if (pool.users == 0)
        empty_locked();
    pthread_mutex_unlock(&pool.lock);
}

uint8_t *p2_rt_gpu_base(void)
{
    pthread_mutex_lock(&pool.lock);
    uint8_t *base = pool.base;
    pthread_mutex_unlock(&pool.lock);
    return base;
}

uint64_t p2_rt_gpu_size(void)
{
    pthread_mutex_lock(&pool.lock);
    uint64_t size = pool.arena.size;
    pthread_mutex_unlock(&pool.lock);
    return size;
}

uint64_t p2_rt_gpu_used(void)
{
    pthread_mutex_lock(&pool.lock);
    uint64_t used = pool.arena.size ? tca_arena_used(&pool.arena) : 0;
    pthread_mutex_unlock(&pool.lock);
    return used;
}

p2_rt_alloc_status p2_rt_gpu_alloc(uint64_t size, unsigned flags, uint64_t *offset)
{
    pthread_mutex_lock(&pool.lock);
    p2_rt_alloc_status st = P2_RT_ALLOC_UNBOUND;
    if (pool.base) {
        /* cudaMalloc's blocks start at a multiple of 256 bytes, as the real
         * runtime guarantees; tcaMalloc's at a multiple of 64. */
        uint64_t align = flags & P2_RT_GPU_BLOCK_CUDA ? 256 : TCA_ARENA_ALIGN;
        st = from_arena(tca_arena_alloc_aligned(&pool.arena, size, align, offset));
        if (st == P2_RT_ALLOC_OK)
            tca_arena_lookup(&pool.arena, *offset)->flags = flags;
    }
    pthread_mutex_unlock(&pool.lock);
    return st;
}

p2_rt_alloc_status p2_rt_gpu_free(uint64_t offset)
{
    pthread_mutex_lock(&pool.lock);
    p2_rt_alloc_status st =
        pool.base ? from_arena(tca_arena_free(&pool.arena, offset)) : P2_RT_ALLOC_UNBOUND;
    pthread_mutex_unlock(&pool.lock);
    return st;
}

p2_rt_alloc_status p2_rt_gpu_find(uint64_t offset, uint64_t len, uint64_t *start, uint64_t *size,
                                  unsigned *flags)
{
    pthread_mutex_lock(&pool.lock);
    p2_rt_alloc_status st = P2_RT_ALLOC_UNBOUND;
    if (pool.base) {
        const tca_arena_block *b = tca_arena_lookup(&pool.arena, offset);
        st = P2_RT_ALLOC_NOT_ALLOCATED;
        if (b && len <= b->size - (offset - b->offset)) {
            if (start)
                *start = b->offset;
            if (size)
                *size = b->size;
            if (flags)
                *flags = b->flags;
            st = P2_RT_ALLOC_OK;
        }
    }
    pthread_mutex_unlock(&pool.lock);
    return st;
}

p2_rt_alloc_status p2_rt_gpu_set_flags(uint64_t offset, unsigned flags)
{
    pthread_mutex_lock(&pool.lock);
    p2_rt_alloc_status st = P2_RT_ALLOC_UNBOUND;
    if (pool.base) {
        tca_arena_block *b = tca_arena_lookup(&pool.arena, offset);
        st = b ? P2_RT_ALLOC_OK : P2_RT_ALLOC_NOT_ALLOCATED;
        if (b)
            b->flags |= flags;
    }
    pthread_mutex_unlock(&pool.lock);
    return st;
}

void p2_rt_gpu_free_all(unsigned flags)
{
    pthread_mutex_lock(&pool.lock);
    for (size_t i = 0; pool.base && i < pool.arena.count;) {
        const tca_arena_block *b = &pool.arena.blocks[i];
        if (b->used && (b->flags & flags) == flags)
            tca_arena_free(&pool.arena, b->offset); /* merges: look at i again */
        else
            i++;
    }
    pthread_mutex_unlock(&pool.lock);
}
