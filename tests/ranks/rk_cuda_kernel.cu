// rk_cuda_kernel.cu - a <<<>>> launch compiled by nvcc (-cudart shared): on
// the emulated runtime the program loads (nvcc's registration calls), and the
// launch fails with cudaErrorNoKernelImageForDevice and a line naming the
// kernel; the copies around it still work.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void scale(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}

int main()
{
    float h[256], *d = nullptr;
    for (int i = 0; i < 256; i++) h[i] = (float)i;
    if (cudaMalloc(&d, sizeof h) != cudaSuccess ||
        cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice) != cudaSuccess) {
        std::fprintf(stderr, "FAIL: cudaMalloc/cudaMemcpy\n");
        return 1;
    }
    scale<<<1, 256>>>(d, 2.0f, 256);
    cudaError_t e = cudaGetLastError();
    std::printf("kernel launch: %s\n", cudaGetErrorName(e));
    if (e != cudaErrorNoKernelImageForDevice) {
        std::fprintf(stderr, "FAIL: the launch returned %s\n", cudaGetErrorName(e));
        return 1;
    }
    float back[256];
    if (cudaMemcpy(back, d, sizeof back, cudaMemcpyDeviceToHost) != cudaSuccess || back[7] != 7.0f) {
        std::fprintf(stderr, "FAIL: the data changed or the copy failed\n");
        return 1;
    }
    cudaFree(d);
    std::printf("kernel test: launch refused cleanly, memory untouched\n");
    return 0;
}
