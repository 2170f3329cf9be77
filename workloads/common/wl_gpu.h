/*
 * wl_gpu.h - what GPUs this host has. The emulator always runs GPU memory as
 * host memory timed by the model; this only tells the reader of a report
 * whether a real CUDA device was there (compiled with CUDA where nvcc exists,
 * never needed at run time).
 */
#ifndef WL_GPU_H
#define WL_GPU_H

#include <stddef.h>

/* CUDA devices on this host; 0 with the reason in `why` when none. */
int wl_gpu_count(char *why, size_t why_size);

#endif
