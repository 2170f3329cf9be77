// wl_gpu_cuda.cu - wl_gpu_count with the CUDA runtime (linked statically, so
// a host without a driver still runs the workloads: the call just fails).
#include <cstdio>

#include <cuda_runtime.h>

extern "C" int wl_gpu_count(char* why, size_t why_size) {
  int count = 0;  // cudaGetDeviceCount leaves it unwritten when it fails
  cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    std::snprintf(why, why_size, "%s", cudaGetErrorString(rc));
    return 0;
  }
  if (count == 0) std::snprintf(why, why_size, "no CUDA device");
  return count;
}
