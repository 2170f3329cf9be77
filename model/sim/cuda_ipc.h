// cuda_ipc.h - the real CUDA path in the simulator (lib/cuda/README.md): ranges of a
// node's GPU window backed by real GPU memory that a rank allocated with the
// real CUDA runtime and registered with tcaCreateHandle(..., tcaMemoryGPU).
//
// The rank sends the allocation's CUDA IPC handle (P2_CHAN_GPU_REGISTER);
// the simulator opens it with the driver API (cuIpcOpenMemHandle) and, from
// then on, the model's GPU memory target (Host) moves that range's bytes with
// cuMemcpyHtoD / cuMemcpyDtoH instead of the arena, at the same modelled
// times. The driver (libcuda.so.1) is loaded with dlopen on the first
// registration, so p2sim starts and runs without a GPU or a CUDA installation;
// a registration is then refused with the reason.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "host/host.h"

namespace p2 {

class CudaDriver;  // the dlopen'ed driver API (cuda_ipc.cc)

class CudaIpcMemory : public ExternalGpuMemory {
 public:
  explicit CudaIpcMemory(unsigned node);
  ~CudaIpcMemory() override;

  // Backs [window_off, window_off + len) of the node's GPU window with the
  // bytes at `alloc_off` in the allocation behind the 64-byte CUDA IPC
  // handle, on CUDA device `ordinal` (as the rank numbers it; p2run gives the
  // simulator the ranks' environment). False with *why on any failure.
  bool add(uint64_t window_off, uint64_t len, const uint8_t ipc_handle[64], uint64_t alloc_off,
           int ordinal, std::string* why);
  // Ends the range starting at window_off; false if there is none.
  bool remove(uint64_t window_off);
  size_t ranges() const { return ranges_.size(); }

  bool covers(uint64_t off, uint64_t len) const override;
  bool read(uint64_t off, uint8_t* dst, uint64_t len) override;
  bool write(uint64_t off, const uint8_t* src, uint64_t len) override;

 private:
  struct Mapping;  // one opened IPC handle, shared by the ranges in its allocation
  struct Range {
    uint64_t len;
    uint64_t alloc_off;
    std::shared_ptr<Mapping> mapping;
  };
  const Range* find(uint64_t off, uint64_t len, uint64_t* into) const;

  unsigned node_;
  std::map<uint64_t, Range> ranges_;  // by window offset
  std::map<std::string, std::weak_ptr<Mapping>> mappings_;  // by handle bytes
};

}  // namespace p2
