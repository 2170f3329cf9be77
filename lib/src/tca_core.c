/*
 * tca_core.c - library state, status strings, memory and handles.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "p2_mailbox.h"
#include "rt/rt_alloc.h"
#include "rt/rt_cuda.h"
#include "rt/rt.h"
#include "tca_internal.h"

tca_lib tca_g = {.lock = PTHREAD_MUTEX_INITIALIZER, .run_lock = PTHREAD_MUTEX_INITIALIZER};

/* ---------------------------------------------------------------------------
 * Status strings
 * ------------------------------------------------------------------------- */
/* A tcaresult added without its string does not build. */
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch"
const char *tcaGetErrorString(tcaresult result)
{
    switch (result) {
    case TCA_SUCCESS: return "TCA_SUCCESS: success";
    case TCA_NOT_YET: return "TCA_NOT_YET: nothing has arrived yet";
    case TCA_ERROR_INVALID_HANDLE: return "TCA_ERROR_INVALID_HANDLE: invalid or destroyed handle";
    case TCA_ERROR_OUT_OF_RANGE: return "TCA_ERROR_OUT_OF_RANGE: offset + size beyond the region";
    case TCA_ERROR_INVALID_CHANNEL: return "TCA_ERROR_INVALID_CHANNEL: no such DMAC channel";
    case TCA_ERROR_CHAIN_TOO_LONG:
        return "TCA_ERROR_CHAIN_TOO_LONG: chain longer than the descriptor registers hold";
    case TCA_ERROR_INVALID_SLOT: return "TCA_ERROR_INVALID_SLOT: wait slot out of range";
    case TCA_ERROR_INVALID_TAG: return "TCA_ERROR_INVALID_TAG: wait tag out of range";
    case TCA_ERROR_NOT_INITIALIZED: return "TCA_ERROR_NOT_INITIALIZED: tcaInit has not succeeded";
    case TCA_ERROR_INVALID_ARGUMENT:
        return "TCA_ERROR_INVALID_ARGUMENT: NULL pointer, zero size or unknown memory kind";
    case TCA_ERROR_OUT_OF_MEMORY: return "TCA_ERROR_OUT_OF_MEMORY: out of memory";
    case TCA_ERROR_NOT_REGISTERED:
        return "TCA_ERROR_NOT_REGISTERED: memory not from tcaMalloc of this kind";
    case TCA_ERROR_REMOTE_SOURCE:
        return "TCA_ERROR_REMOTE_SOURCE: DMA source is not this node's memory";
    case TCA_ERROR_DMA_FAILED:
        return "TCA_ERROR_DMA_FAILED: the DMA channel stopped on an error (tcaGetDMAError)";
    case TCA_ERROR_DEVICE: return "TCA_ERROR_DEVICE: no device, or the simulator is gone";
    case TCA_ERROR_NOT_SUPPORTED: return "TCA_ERROR_NOT_SUPPORTED: not supported";
    case TCA_ERROR_INVALID_FLAGS: return "TCA_ERROR_INVALID_FLAGS: unknown DMA flag bits";
    case TCA_ERROR_TOO_LARGE:
        return "TCA_ERROR_TOO_LARGE: transfer larger than one descriptor can move";
    case TCA_ERROR_CHANNEL_NOT_SET:
        return "TCA_ERROR_CHANNEL_NOT_SET: no chain loaded into this channel (tcaDescSet)";
    case TCA_ERROR_EMPTY_CHAIN: return "TCA_ERROR_EMPTY_CHAIN: the chain has no transfers";
    case TCA_ERROR_PIO_RANGE:
        return "TCA_ERROR_PIO_RANGE: region beyond the reach of the PIO window";
    case TCA_ERROR_NOTIFY_BACKLOG:
        return "TCA_ERROR_NOTIFY_BACKLOG: too many distinct (node, slot, tag) notifications arrived "
               "unclaimed; claim some first";
    case TCA_ERROR_INVALID_DESC:
        return "TCA_ERROR_INVALID_DESC: no such descriptor table, or an index outside it";
    case TCA_ERROR_CHANNEL_BUSY:
        return "TCA_ERROR_CHANNEL_BUSY: the channel is still running a chain (tcaWaitDMAC first)";
    case TCA_ERROR_UNREACHABLE:
        return "TCA_ERROR_UNREACHABLE: the node is on another PEACH2 network (sub-cluster); use MPI "
               "between sub-clusters";
    }
    return "unknown tcaresult";
}
#pragma GCC diagnostic pop

/* ---------------------------------------------------------------------------
 * Attach / detach
 * ------------------------------------------------------------------------- */
static void lib_reset_locked(void)
{
    tca_arena_fini(&tca_g.host_arena);
    /* GPU blocks outlive the library only while the CUDA runtime shares the pool. */
    p2_rt_gpu_unbind(P2_RT_GPU_USER_TCA);
    memset(tca_g.channel, 0, sizeof tca_g.channel);
    memset(&tca_g.notify, 0, sizeof tca_g.notify);
    tca_g.end_wb = NULL;
    tca_g.register_mode = 0;
    tca_g.dev = NULL;
}

/* The p2_exchange mailbox takes the first bytes of host memory, before any
 * tcaMalloc: in a fresh arena the first allocation is first fit at offset 0,
 * so every node's mailbox is at the same, known PCIe offset. */
static int reserve_mailbox_locked(void)
{
    uint64_t offset;
    return tca_arena_alloc(&tca_g.host_arena, P2_EXCHANGE_BYTES, &offset) ==
               TCA_ARENA_OK &&
           offset == P2_MAILBOX_HOST_OFFSET;
}

/* The notification ring: from the arena after the mailbox, zeroed (so no
 * stale entry of an earlier ring passes for a fresh one), then handed to the
 * board; writing RING resets the board's head and tail. */
static int setup_notify_ring_locked(p2_dev *dev)
{
    tca_notify_ring *ring = &tca_g.notify;
    uint64_t offset, bytes = TCA_NOTIFY_RING_ENTRIES * (uint64_t)sizeof(uint64_t);
    if (!dev->ops->mmio_write ||
        tca_arena_alloc(&tca_g.host_arena, bytes, &offset) != TCA_ARENA_OK)
        return 0;
    memset(ring, 0, sizeof *ring);
    ring->offset = offset;
    ring->entries = (volatile uint64_t *)(dev->host_mem + offset);
    memset(dev->host_mem + offset, 0, bytes);
    atomic_thread_fence(memory_order_release); /* zeros before the board sees RING */
    tca_reg_write(dev, P2_REG_NOTIFY_RING_SIZE, TCA_NOTIFY_RING_ENTRIES);
    tca_reg_write(dev, P2_REG_NOTIFY_RING, p2_node_base(dev->node) + P2_HOST_OFFSET + offset);
    return 1;
}

tcaresult tca_lib_attach(p2_dev *dev)
{
    pthread_mutex_lock(&tca_g.lock);
    tcaresult result = TCA_SUCCESS;
    if (tca_g.dev != dev) {
        lib_reset_locked();
        /* The top of host memory belongs to the MPI layer (rt.h). */
        p2_rt *rt = p2_rt_get();
        uint64_t host = dev->host_mem ? dev->host_size : 0;
        if (rt && rt->mpi_share_bytes < host)
            host -= rt->mpi_share_bytes;
        /* Below that, the words the DMAC writes as its channels' runs end
         * (P2_DMA_END_WB): taken off the top, so tcaMalloc's first fit from
         * the bottom hands out what it always did. */
        const uint64_t wb_bytes = P2_DMA_CHANNELS * sizeof(uint64_t);
        const uint64_t needed = P2_EXCHANGE_BYTES + TCA_NOTIFY_RING_ENTRIES * sizeof(uint64_t);
        if (host >= needed + wb_bytes) { /* else status reads only: the mailbox and ring first */
            host -= wb_bytes;
            tca_g.end_wb_offset = host;
            tca_g.end_wb = (volatile uint64_t *)(dev->host_mem + host);
            memset(dev->host_mem + host, 0, wb_bytes);
        }
        if (tca_arena_init(&tca_g.host_arena, host) !=
                TCA_ARENA_OK ||
            p2_rt_gpu_bind(dev->gpu_mem, dev->gpu_mem ? dev->gpu_size : 0, P2_RT_GPU_USER_TCA) !=
                P2_RT_ALLOC_OK ||
            !reserve_mailbox_locked() || !setup_notify_ring_locked(dev)) {
            lib_reset_locked();
            result = TCA_ERROR_OUT_OF_MEMORY;
        } else {
            tca_g.generation++;
            tca_g.dev = dev;
        }
    }
    pthread_mutex_unlock(&tca_g.lock);
    return result;
}

void tca_lib_detach(void)
{
    /* Real GPU memory still registered goes back before the pool empties. */
    if (tca_g.dev)
        p2_rt_cuda_unregister_all(p2_rt_get());
    pthread_mutex_lock(&tca_g.lock);
    /* Unset the ring before its memory goes back: the board drops (and
     * counts) notifications from now on instead of writing freed memory. */
    if (tca_g.dev && tca_g.notify.table_on)
        tca_reg_write(tca_g.dev, P2_REG_NOTIFY_TABLE_ON, 0);
    for (int c = 0; tca_g.dev && c < P2_DMA_CHANNELS; c++)
        if (tca_g.channel[c].end_wb)
            tca_reg_write(tca_g.dev, P2_REG_DMA(c, P2_DMA_END_WB), 0);
    if (tca_g.dev && tca_g.notify.entries) {
        tca_reg_write(tca_g.dev, P2_REG_NOTIFY_RING, 0);
        tca_arena_free(&tca_g.host_arena, tca_g.notify.offset);
    }
    lib_reset_locked();
    pthread_mutex_unlock(&tca_g.lock);
}

void tca_set_device_for_testing(p2_dev *dev)
{
    tca_lib_detach();
    if (dev)
        tca_lib_attach(dev);
}

tcaresult tcaFinalize(void)
{
    P2_API_CALL();
    if (!tca_dev())
        return TCA_ERROR_NOT_INITIALIZED;
    tca_lib_detach();
    return TCA_SUCCESS;
}

tcaresult tcaDMADescInt_Init(void)
{
    P2_API_CALL();
    if (!tca_dev())
        return TCA_ERROR_NOT_INITIALIZED;
    tca_g.register_mode = 1;
    return TCA_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * Memory
 * ------------------------------------------------------------------------- */
static int kind_valid(tcaMemoryKind kind)
{
    return kind == tcaMemoryCPU || kind == tcaMemoryGPU;
}

static uint8_t *arena_base(const p2_dev *dev, tcaMemoryKind kind)
{
    return kind == tcaMemoryCPU ? dev->host_mem : dev->gpu_mem;
}

static uint64_t window_offset(tcaMemoryKind kind)
{
    return kind == tcaMemoryCPU ? P2_HOST_OFFSET : P2_GPU_OFFSET;
}

static uint64_t window_size(tcaMemoryKind kind)
{
    return kind == tcaMemoryCPU ? P2_HOST_SIZE : P2_GPU_SIZE;
}

tcaresult tca_arena_alloc_locked(tcaMemoryKind kind, uint64_t size, uint64_t *offset)
{
    pthread_mutex_lock(&tca_g.lock);
    tcaresult result;
    if (!tca_g.dev) {
        result = TCA_ERROR_NOT_INITIALIZED;
    } else if (kind == tcaMemoryGPU) {
        result = p2_rt_gpu_alloc(size, 0, offset) == P2_RT_ALLOC_OK ? TCA_SUCCESS
                                                                    : TCA_ERROR_OUT_OF_MEMORY;
    } else {
        switch (tca_arena_alloc(&tca_g.host_arena, size, offset)) {
        case TCA_ARENA_OK: result = TCA_SUCCESS; break;
        default: result = TCA_ERROR_OUT_OF_MEMORY; break;
        }
    }
    pthread_mutex_unlock(&tca_g.lock);
    return result;
}

void tca_arena_free_locked(tcaMemoryKind kind, uint64_t offset)
{
    pthread_mutex_lock(&tca_g.lock);
    if (tca_g.dev && kind == tcaMemoryGPU)
        p2_rt_gpu_free(offset);
    else if (tca_g.dev)
        tca_arena_free(&tca_g.host_arena, offset);
    pthread_mutex_unlock(&tca_g.lock);
}

tcaresult tca_region_room(const void *addr, tcaMemoryKind kind, uint64_t *room)
{
    p2_dev *dev = tca_dev();
    if (!dev)
        return TCA_ERROR_NOT_INITIALIZED;
    uintptr_t base = (uintptr_t)(kind_valid(kind) ? arena_base(dev, kind) : NULL);
    uintptr_t a = (uintptr_t)addr;
    if (!base || a < base)
        return TCA_ERROR_NOT_REGISTERED;
    uint64_t start = 0, size = 0;
    int found;
    if (kind == tcaMemoryGPU) {
        unsigned flags = 0;
        found = p2_rt_gpu_find(a - base, 1, &start, &size, &flags) == P2_RT_ALLOC_OK &&
                !(flags & P2_RT_GPU_BLOCK_EXTERNAL);
    } else {
        pthread_mutex_lock(&tca_g.lock);
        const tca_arena_block *b = tca_arena_lookup(&tca_g.host_arena, a - base);
        if ((found = b != NULL)) {
            start = b->offset;
            size = b->size;
        }
        pthread_mutex_unlock(&tca_g.lock);
    }
    if (!found)
        return TCA_ERROR_NOT_REGISTERED;
    *room = start + size - (a - base);
    return TCA_SUCCESS;
}

tcaresult tcaMalloc(void **ptr, size_t size, tcaMemoryKind kind)
{
    p2_dev *dev = tca_dev();
    if (!dev)
        return TCA_ERROR_NOT_INITIALIZED;
    if (!ptr || size == 0 || !kind_valid(kind))
        return TCA_ERROR_INVALID_ARGUMENT;
    uint64_t offset;
    tcaresult result = tca_arena_alloc_locked(kind, size, &offset);
    if (result != TCA_SUCCESS)
        return result;
    *ptr = arena_base(dev, kind) + offset;
    return TCA_SUCCESS;
}

tcaresult tcaFree(void *ptr, tcaMemoryKind kind)
{
    p2_dev *dev = tca_dev();
    if (!dev)
        return TCA_ERROR_NOT_INITIALIZED;
    if (!ptr || !kind_valid(kind))
        return TCA_ERROR_INVALID_ARGUMENT;
    uintptr_t base = (uintptr_t)arena_base(dev, kind), addr = (uintptr_t)ptr;
    if (!base || addr < base)
        return TCA_ERROR_NOT_REGISTERED;
    /* The mailbox is the library's, not a tcaMalloc block of the caller's. */
    if (kind == tcaMemoryCPU && addr - base < P2_MAILBOX_HOST_OFFSET + P2_EXCHANGE_BYTES)
        return TCA_ERROR_NOT_REGISTERED;
    /* Nor is the notification ring. */
    if (kind == tcaMemoryCPU && tca_g.notify.entries && addr - base == tca_g.notify.offset)
        return TCA_ERROR_NOT_REGISTERED;
    if (kind == tcaMemoryGPU) {
        /* Only tcaMalloc's blocks: cudaMalloc's go back with cudaFree. */
        uint64_t start;
        unsigned flags;
        if (p2_rt_gpu_find(addr - base, 1, &start, NULL, &flags) != P2_RT_ALLOC_OK ||
            start != addr - base || (flags & (P2_RT_GPU_BLOCK_CUDA | P2_RT_GPU_BLOCK_EXTERNAL)))
            return TCA_ERROR_NOT_REGISTERED;
        return p2_rt_gpu_free(start) == P2_RT_ALLOC_OK ? TCA_SUCCESS : TCA_ERROR_NOT_REGISTERED;
    }
    pthread_mutex_lock(&tca_g.lock);
    tca_arena_status st = tca_arena_free(&tca_g.host_arena, addr - base);
    pthread_mutex_unlock(&tca_g.lock);
    return st == TCA_ARENA_OK ? TCA_SUCCESS : TCA_ERROR_NOT_REGISTERED;
}

/* ---------------------------------------------------------------------------
 * Handles
 * ------------------------------------------------------------------------- */
/* FNV-1a: cheap, and the same in every process, so copied handles stay valid. */
static uint32_t fnv1a(uint32_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        h ^= (uint32_t)(v >> (8 * i)) & 0xffu;
        h *= 16777619u;
    }
    return h;
}

#define TCA_FNV_BASIS 2166136261u
#define TCA_HANDLE_SALT 0x54434148u /* "TCAH": a PIO handle's word never fits a tcaHandle */
#define TCA_PIO_SALT 0x5443414fu    /* "TCAO" */

uint32_t tca_handle_check_word(const tcaHandle *handle)
{
    uint32_t h = fnv1a(TCA_FNV_BASIS, TCA_HANDLE_SALT);
    h = fnv1a(h, handle->pcie_addr);
    h = fnv1a(h, handle->size);
    h = fnv1a(h, ((uint64_t)handle->kind << 32) | handle->node);
    return h ? h : 1;
}

uint32_t tca_pio_check_word(const tcaPIOHandle *pio)
{
    uint32_t h = fnv1a(TCA_FNV_BASIS, TCA_PIO_SALT);
    h = fnv1a(h, pio->window_offset);
    h = fnv1a(h, pio->size);
    h = fnv1a(h, pio->node);
    return h ? h : 1;
}

tcaHandle tca_handle_make(uint64_t pcie_addr, uint64_t size, tcaMemoryKind kind, unsigned node)
{
    tcaHandle h = {.pcie_addr = pcie_addr, .size = size, .kind = (uint32_t)kind, .node = node};
    h.check = tca_handle_check_word(&h);
    return h;
}

tcaresult tca_handle_validate(const tcaHandle *handle, unsigned nnodes)
{
    if (!handle || handle->check == 0 || handle->check != tca_handle_check_word(handle) ||
        handle->reserved != 0)
        return TCA_ERROR_INVALID_HANDLE;
    tcaMemoryKind kind = (tcaMemoryKind)handle->kind;
    if (!kind_valid(kind) || handle->node >= nnodes || handle->node >= P2_MAX_NODES ||
        handle->size == 0 || p2_addr_node(handle->pcie_addr) != handle->node)
        return TCA_ERROR_INVALID_HANDLE;
    uint64_t off = p2_addr_offset(handle->pcie_addr);
    uint64_t win = window_offset(kind);
    /* The region must lie in the memory its node exposes, not merely in the
     * 16 GiB window: every node exposes as much as this one (the board's DMAC
     * checks destinations the same way, P2_ERR_DST_RANGE). */
    uint64_t limit = window_size(kind);
    const p2_dev *dev = tca_dev();
    uint64_t exposed = !dev ? 0 : kind == tcaMemoryCPU ? dev->host_size : dev->gpu_size;
    if (exposed > 0 && exposed < limit)
        limit = exposed;
    if (off < win || off - win > limit || handle->size > limit - (off - win))
        return TCA_ERROR_INVALID_HANDLE;
    return TCA_SUCCESS;
}

tcaresult tca_node_reachable(const p2_dev *dev, unsigned node, const char *what)
{
    if (!dev->network || node >= dev->nnodes || node == dev->node ||
        dev->network[node] == dev->network[dev->node])
        return TCA_SUCCESS;
    fprintf(stderr,
            "p2tca: rank %d: %s from node %u to node %u refused: node %u is on PEACH2 sub-cluster %u, "
            "node %u on sub-cluster %u, and no cable joins them (TCA_ERROR_UNREACHABLE; move data "
            "between sub-clusters with MPI)\n",
            dev->rank, what, dev->node, node, dev->node, dev->network[dev->node], node,
            dev->network[node]);
    return TCA_ERROR_UNREACHABLE;
}

tcaresult tca_handle_range(const tcaHandle *handle, uint64_t offset, uint64_t extent)
{
    if (offset > handle->size || extent > handle->size - offset)
        return TCA_ERROR_OUT_OF_RANGE;
    return TCA_SUCCESS;
}

tcaresult tcaCreateHandle(tcaHandle *handle, void *addr, size_t size, tcaMemoryKind kind)
{
    P2_API_CALL(); /* real GPU memory is registered with the simulator */
    p2_dev *dev = tca_dev();
    if (!dev)
        return TCA_ERROR_NOT_INITIALIZED;
    if (!handle || !addr || size == 0 || !kind_valid(kind))
        return TCA_ERROR_INVALID_ARGUMENT;
    uintptr_t base = (uintptr_t)arena_base(dev, kind), a = (uintptr_t)addr;
    uint64_t arena_size = kind == tcaMemoryGPU ? p2_rt_gpu_size() : tca_g.host_arena.size;
    int in_arena = base && a >= base && a - base <= arena_size && size <= arena_size - (a - base);
    /* Real GPU memory (cudaMalloc of the real runtime): the simulator maps it
     * through CUDA IPC into window space reserved for it (rt/rt_cuda.h). */
    if (kind == tcaMemoryGPU && !in_arena) {
        uint64_t off;
        switch (p2_rt_cuda_register(p2_rt_get(), addr, size, &off)) {
        case P2_RT_CUDA_OK:
            *handle = tca_handle_make(p2_node_base(dev->node) + P2_GPU_OFFSET + off, size, kind,
                                      dev->node);
            return TCA_SUCCESS;
        case P2_RT_CUDA_FAILED: return TCA_ERROR_NOT_REGISTERED;
        case P2_RT_CUDA_NOT_DEVICE: break;
        }
    }
    if (!in_arena)
        return TCA_ERROR_NOT_REGISTERED;
    /* GPU memory: the range must lie in one live block, from tcaMalloc or
     * cudaMalloc; the block is then registered for GPUDirect (which makes the
     * CUDA runtime's own copies of it slower: lib/cuda, cuda_d2d_reg_latency_ns). */
    if (kind == tcaMemoryGPU) {
        unsigned flags;
        if (p2_rt_gpu_find(a - base, size, NULL, NULL, &flags) != P2_RT_ALLOC_OK ||
            (flags & P2_RT_GPU_BLOCK_EXTERNAL))
            return TCA_ERROR_NOT_REGISTERED;
        p2_rt_gpu_set_flags(a - base, P2_RT_GPU_BLOCK_REGISTERED);
    }
    *handle = tca_handle_make(p2_node_base(dev->node) + window_offset(kind) + (a - base), size,
                              kind, dev->node);
    return TCA_SUCCESS;
}

tcaresult tcaDestroyHandle(tcaHandle *handle)
{
    P2_API_CALL();
    if (!handle || handle->check == 0 || handle->check != tca_handle_check_word(handle))
        return TCA_ERROR_INVALID_HANDLE;
    /* A handle on real GPU memory ends its registration with the simulator. */
    p2_dev *dev = tca_dev();
    if (dev && handle->kind == tcaMemoryGPU && handle->node == dev->node &&
        handle->pcie_addr >= p2_node_base(dev->node) + P2_GPU_OFFSET) {
        uint64_t off = handle->pcie_addr - p2_node_base(dev->node) - P2_GPU_OFFSET;
        unsigned flags;
        if (p2_rt_gpu_find(off, handle->size, NULL, NULL, &flags) == P2_RT_ALLOC_OK &&
            (flags & P2_RT_GPU_BLOCK_EXTERNAL))
            p2_rt_cuda_unregister(p2_rt_get(), off, handle->size);
    }
    handle->check = 0;
    return TCA_SUCCESS;
}
