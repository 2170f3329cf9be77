/*
 * arena.c - per-node host and GPU memory as POSIX shared-memory objects.
 */
#include "arena.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "peach2_hw.h"

static const char *arena_kind_name(p2_arena_kind kind)
{
    return kind == P2_ARENA_GPU ? "gpu" : "host";
}

void p2_arena_name(const char *job_name, unsigned node, p2_arena_kind kind, char *out,
                   size_t outlen)
{
    snprintf(out, outlen, "%s-n%u-%s", job_name, node, arena_kind_name(kind));
}

static int arena_open(const char *job_name, unsigned node, p2_arena_kind kind, uint64_t size,
                      int create, p2_arena *out, char *err, size_t errlen)
{
    char name[128];
    p2_arena_name(job_name, node, kind, name, sizeof name);
    out->base = NULL;
    out->size = 0;
    if (size == 0)
        return 0; /* a node without this memory */
    /* Never an object that exists: job names are drawn at random (channel.h),
     * so one that does is someone else's, to be neither used nor removed. */
    int fd = shm_open(name, create ? O_RDWR | O_CREAT | O_EXCL : O_RDWR, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "%s arena %s: shm_open: %s", arena_kind_name(kind), name,
                 strerror(errno));
        return -1;
    }
    if (create && ftruncate(fd, (off_t)size) != 0) {
        snprintf(err, errlen, "%s arena %s: cannot size to %llu bytes: %s",
                 arena_kind_name(kind), name, (unsigned long long)size, strerror(errno));
        close(fd);
        shm_unlink(name);
        return -1;
    }
    if (!create) {
        struct stat st;
        if (fstat(fd, &st) != 0 || (uint64_t)st.st_size < size) {
            snprintf(err, errlen, "%s arena %s: smaller than the %llu bytes announced",
                     arena_kind_name(kind), name, (unsigned long long)size);
            close(fd);
            return -1;
        }
    }
    /* MAP_NORESERVE: the arenas are sparse, sized for the address map, and
     * mostly never touched. */
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        snprintf(err, errlen, "%s arena %s: mmap of %llu bytes: %s", arena_kind_name(kind),
                 name, (unsigned long long)size, strerror(errno));
        if (create)
            shm_unlink(name);
        return -1;
    }
    out->base = p;
    out->size = size;
    return 0;
}

int p2_arena_create(const char *job_name, unsigned node, p2_arena_kind kind, uint64_t size,
                    p2_arena *out, char *err, size_t errlen)
{
    return arena_open(job_name, node, kind, size, 1, out, err, errlen);
}

int p2_arena_map(const char *job_name, unsigned node, p2_arena_kind kind, uint64_t size,
                 p2_arena *out, char *err, size_t errlen)
{
    return arena_open(job_name, node, kind, size, 0, out, err, errlen);
}

void p2_arena_unmap(p2_arena *a)
{
    if (a->base)
        munmap(a->base, a->size);
    a->base = NULL;
    a->size = 0;
}

void p2_arena_unlink(const char *job_name, unsigned node, p2_arena_kind kind)
{
    char name[128];
    p2_arena_name(job_name, node, kind, name, sizeof name);
    shm_unlink(name);
}

uint64_t p2_arena_bus_base(unsigned node, p2_arena_kind kind)
{
    return p2_node_base(node) + (kind == P2_ARENA_HOST ? P2_HOST_OFFSET : P2_GPU_OFFSET);
}
