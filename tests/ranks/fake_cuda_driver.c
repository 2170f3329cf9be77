/*
 * fake_cuda_driver.c - a stand-in for the CUDA driver (libcuda.so.1) with
 * just the calls the real CUDA path uses (lib/src/rt/rt_cuda_ipc.c in the
 * rank, model/sim/cuda_ipc.cc in the simulator), so that the path's plumbing
 * runs end to end on a machine without a GPU: "device memory" is a POSIX
 * shared-memory object, its "IPC handle" the object's name, and the
 * simulator's "IPC mapping" a second mapping of it. Nothing here is CUDA:
 * it checks the protocol, the window reservation, the model's external
 * memory and the unregistering, not the driver (ranks.cuda.real does that on
 * a GPU). Test-only; the test points LD_LIBRARY_PATH at it.
 *
 * Objects are named /p2-<jobid>-fakegpu-<pid>-<n>, under the job's prefix,
 * so that p2run removes whatever a failed run leaves.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef struct {
    char reserved[64];
} CUipcMemHandle;
enum { OK = 0, INVALID_VALUE = 1, NOT_INITIALIZED = 3, INVALID_HANDLE = 400 };

typedef struct block {
    struct block *next;
    CUdeviceptr base;
    size_t size;
    char name[48];
    int exported; /* allocated here (else opened from a handle) */
} block;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static block *blocks;
static int initialised;

static block *find(CUdeviceptr p)
{
    for (block *b = blocks; b; b = b->next)
        if (p >= b->base && p < b->base + b->size)
            return b;
    return NULL;
}

CUresult cuInit(unsigned flags)
{
    (void)flags;
    initialised = 1;
    return OK;
}

CUresult cuGetErrorString(CUresult r, const char **s)
{
    *s = r == INVALID_VALUE ? "invalid argument (fake driver)" : "error (fake driver)";
    return OK;
}

CUresult cuDeviceGet(int *dev, int ordinal)
{
    if (!initialised)
        return NOT_INITIALIZED;
    if (ordinal != 0)
        return INVALID_VALUE;
    *dev = 0;
    return OK;
}

CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev)
{
    (void)dev;
    *ctx = (void *)&blocks;
    return OK;
}

CUresult cuCtxPushCurrent_v2(void *ctx) { return ctx ? OK : INVALID_VALUE; }
CUresult cuCtxPopCurrent_v2(void **ctx)
{
    *ctx = (void *)&blocks;
    return OK;
}
CUresult cuCtxSynchronize(void) { return OK; }

static CUresult map(const char *name, size_t size, int create, block **out)
{
    int fd = shm_open(name, create ? O_RDWR | O_CREAT | O_EXCL : O_RDWR, 0600);
    if (fd < 0) {
        if (getenv("P2_FAKE_CUDA_DEBUG"))
            fprintf(stderr, "fake cuda: shm_open %s: %m\n", name);
        return INVALID_HANDLE;
    }
    if (create && ftruncate(fd, (off_t)size) != 0) {
        close(fd);
        shm_unlink(name);
        return INVALID_VALUE;
    }
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return INVALID_VALUE;
    block *b = calloc(1, sizeof *b);
    *b = (block){.base = (CUdeviceptr)(uintptr_t)p, .size = size, .exported = create};
    snprintf(b->name, sizeof b->name, "%s", name);
    pthread_mutex_lock(&lock);
    b->next = blocks;
    blocks = b;
    pthread_mutex_unlock(&lock);
    *out = b;
    return OK;
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t size)
{
    static unsigned n;
    const char *job = getenv("P2_JOB"); /* "/p2-<jobid>-job" */
    if (!job || size == 0)
        return INVALID_VALUE;
    char name[48];
    snprintf(name, sizeof name, "%.*sfakegpu-%d-%u", (int)(strlen(job) - 3), job, (int)getpid(),
             n++);
    block *b;
    CUresult r = map(name, size, 1, &b);
    if (r == OK)
        *dptr = b->base;
    return r;
}

static CUresult unmap(CUdeviceptr p, int exported)
{
    pthread_mutex_lock(&lock);
    block **link = &blocks, *b;
    while ((b = *link) && !(b->base == p && b->exported == exported))
        link = &b->next;
    if (b)
        *link = b->next;
    pthread_mutex_unlock(&lock);
    if (!b)
        return INVALID_VALUE;
    munmap((void *)(uintptr_t)b->base, b->size);
    if (exported)
        shm_unlink(b->name);
    free(b);
    return OK;
}

CUresult cuMemFree_v2(CUdeviceptr p) { return unmap(p, 1); }

CUresult cuPointerGetAttribute(void *data, int attribute, CUdeviceptr p)
{
    pthread_mutex_lock(&lock);
    block *b = find(p);
    pthread_mutex_unlock(&lock);
    if (!b)
        return INVALID_VALUE;
    if (attribute == 2) /* CU_POINTER_ATTRIBUTE_MEMORY_TYPE: device */
        *(unsigned *)data = 2;
    else if (attribute == 9) /* CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL */
        *(int *)data = 0;
    else
        return INVALID_VALUE;
    return OK;
}

CUresult cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
    pthread_mutex_lock(&lock);
    block *b = find(p);
    pthread_mutex_unlock(&lock);
    if (!b)
        return INVALID_VALUE;
    *base = b->base;
    *size = b->size;
    return OK;
}

CUresult cuIpcGetMemHandle(CUipcMemHandle *h, CUdeviceptr p)
{
    pthread_mutex_lock(&lock);
    block *b = find(p);
    pthread_mutex_unlock(&lock);
    if (!b || b->base != p)
        return INVALID_VALUE;
    memset(h, 0, sizeof *h);
    snprintf(h->reserved, 48, "%s", b->name);
    memcpy(h->reserved + 48, &b->size, sizeof b->size);
    return OK;
}

CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *dptr, CUipcMemHandle h, unsigned flags)
{
    (void)flags;
    char name[49];
    size_t size;
    memcpy(name, h.reserved, 48);
    name[48] = '\0';
    memcpy(&size, h.reserved + 48, sizeof size);
    block *b;
    CUresult r = map(name, size, 0, &b);
    if (r == OK)
        *dptr = b->base;
    return r;
}

CUresult cuIpcCloseMemHandle(CUdeviceptr p) { return unmap(p, 0); }

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
    pthread_mutex_lock(&lock);
    block *b = find(dst);
    pthread_mutex_unlock(&lock);
    if (!b || n > b->base + b->size - dst)
        return INVALID_VALUE;
    memcpy((void *)(uintptr_t)dst, src, n);
    return OK;
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
    pthread_mutex_lock(&lock);
    block *b = find(src);
    pthread_mutex_unlock(&lock);
    if (!b || n > b->base + b->size - src)
        return INVALID_VALUE;
    memcpy(dst, (const void *)(uintptr_t)src, n);
    return OK;
}
