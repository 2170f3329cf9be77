/* wl_gpu_none.c - wl_gpu_count where the build found no CUDA compiler. */
#include <stdio.h>

#include "wl_gpu.h"

int wl_gpu_count(char *why, size_t why_size)
{
    snprintf(why, why_size, "built without CUDA");
    return 0;
}
