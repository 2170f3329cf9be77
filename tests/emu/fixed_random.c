/* fixed_random.c - an LD_PRELOAD shim for the emu.shm_names case: the first
 * 8-byte getrandom() of a process returns $P2_FIXED_RANDOM (16 hex digits),
 * so that the case can create the job name p2run draws first and see it draw
 * another instead of failing with "File exists". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/types.h>

ssize_t getrandom(void *buf, size_t len, unsigned int flags)
{
    static int used;
    const char *hex = getenv("P2_FIXED_RANDOM");
    if (hex && strlen(hex) == 16 && len == sizeof(uint64_t) && !used) {
        used = 1;
        uint64_t v = strtoull(hex, NULL, 16);
        memcpy(buf, &v, sizeof v);
        return (ssize_t)sizeof v;
    }
    ssize_t (*real)(void *, size_t, unsigned int) =
        (ssize_t(*)(void *, size_t, unsigned int))dlsym(RTLD_NEXT, "getrandom");
    return real ? real(buf, len, flags) : -1;
}
