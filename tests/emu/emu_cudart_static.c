/*
 * emu_cudart_static.c - a CUDA program linked against the static runtime
 * (nvcc's default): p2run cannot give it the emulated runtime and says so.
 */
#include <cuda_runtime.h>
#include <stdio.h>

int main(void)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    printf("static runtime: cudaGetDeviceCount: %s, %d device(s)\n", cudaGetErrorName(e), n);
    return 0;
}
