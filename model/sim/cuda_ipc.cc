#include "sim/cuda_ipc.h"

#include <cstring>
#include <iterator>
#include <iostream>

#include <dlfcn.h>

namespace p2 {

// The few driver API calls the simulator needs, declared here with the
// driver's ABI (cuda.h) so that p2sim builds without the toolkit and runs
// without the driver. The versioned names are the ones cuda.h maps the plain
// names to (cuIpcOpenMemHandle -> cuIpcOpenMemHandle_v2, ...).
class CudaDriver {
 public:
  using CUresult = int;
  using CUdevice = int;
  using CUcontext = void*;
  using CUdeviceptr = unsigned long long;
  struct CUipcMemHandle {
    char reserved[64];
  };

  // The driver, loaded on first use; nullptr with *why when it cannot be.
  static CudaDriver* get(std::string* why) {
    static CudaDriver driver;
    if (!driver.ok_) *why = driver.why_;
    return driver.ok_ ? &driver : nullptr;
  }

  std::string error(const char* call, CUresult r) const {
    const char* s = nullptr;
    if (get_error_string_) get_error_string_(r, &s);
    return std::string(call) + " failed: " + (s ? s : "CUDA error " + std::to_string(r));
  }

  // The primary context of device `ordinal`, retained once per device.
  bool context(int ordinal, CUcontext* ctx, std::string* why) {
    auto it = contexts_.find(ordinal);
    if (it != contexts_.end()) {
      *ctx = it->second;
      return true;
    }
    CUdevice dev = 0;
    CUresult r = device_get_(&dev, ordinal);
    if (r != 0) {
      *why = error("cuDeviceGet", r);
      return false;
    }
    r = primary_ctx_retain_(ctx, dev);
    if (r != 0) {
      *why = error("cuDevicePrimaryCtxRetain", r);
      return false;
    }
    contexts_[ordinal] = *ctx;
    return true;
  }

  // Calls f with ctx current on this thread.
  template <class F>
  CUresult in(CUcontext ctx, F f) {
    CUresult r = ctx_push_(ctx);
    if (r != 0) return r;
    r = f();
    CUcontext popped;
    ctx_pop_(&popped);
    return r;
  }

  CUresult (*ipc_open_)(CUdeviceptr*, CUipcMemHandle, unsigned) = nullptr;
  CUresult (*ipc_close_)(CUdeviceptr) = nullptr;
  CUresult (*htod_)(CUdeviceptr, const void*, size_t) = nullptr;
  CUresult (*dtoh_)(void*, CUdeviceptr, size_t) = nullptr;
  CUresult (*synchronize_)() = nullptr;

 private:
  CudaDriver() {
    lib_ = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib_) {
      const char* e = dlerror();
      why_ = std::string("the CUDA driver library libcuda.so.1 cannot be loaded (") +
             (e ? e : "?") + ")";
      return;
    }
    bool all = sym(init_, "cuInit") && sym(device_get_, "cuDeviceGet") &&
               sym(primary_ctx_retain_, "cuDevicePrimaryCtxRetain") &&
               sym(ctx_push_, "cuCtxPushCurrent_v2") && sym(ctx_pop_, "cuCtxPopCurrent_v2") &&
               sym(ipc_open_, "cuIpcOpenMemHandle_v2") &&
               sym(ipc_close_, "cuIpcCloseMemHandle") && sym(htod_, "cuMemcpyHtoD_v2") &&
               sym(dtoh_, "cuMemcpyDtoH_v2") && sym(synchronize_, "cuCtxSynchronize");
    sym(get_error_string_, "cuGetErrorString");
    if (!all) return;  // why_ names the missing call
    CUresult r = init_(0);
    if (r != 0) {
      why_ = error("cuInit", r);
      return;
    }
    ok_ = true;
  }

  template <class T>
  bool sym(T& fn, const char* name) {
    fn = reinterpret_cast<T>(dlsym(lib_, name));
    if (!fn && why_.empty()) why_ = std::string("libcuda.so.1 has no ") + name;
    return fn != nullptr;
  }

  void* lib_ = nullptr;
  bool ok_ = false;
  std::string why_;
  std::map<int, CUcontext> contexts_;
  CUresult (*init_)(unsigned) = nullptr;
  CUresult (*device_get_)(CUdevice*, int) = nullptr;
  CUresult (*primary_ctx_retain_)(CUcontext*, CUdevice) = nullptr;
  CUresult (*ctx_push_)(CUcontext) = nullptr;
  CUresult (*ctx_pop_)(CUcontext*) = nullptr;
  CUresult (*get_error_string_)(CUresult, const char**) = nullptr;
};

// One IPC handle opened in the simulator: a process may open a handle once,
// so every range in the same allocation shares it; closed with the last.
struct CudaIpcMemory::Mapping {
  CudaDriver* driver = nullptr;
  CudaDriver::CUcontext ctx = nullptr;
  CudaDriver::CUdeviceptr base = 0;
  ~Mapping() {
    if (driver && base) driver->in(ctx, [&] { return driver->ipc_close_(base); });
  }
};

CudaIpcMemory::CudaIpcMemory(unsigned node) : node_(node) {}
CudaIpcMemory::~CudaIpcMemory() = default;

bool CudaIpcMemory::add(uint64_t window_off, uint64_t len, const uint8_t ipc_handle[64],
                        uint64_t alloc_off, int ordinal, std::string* why) {
  if (len == 0 || window_off + len < window_off) {
    *why = "an empty or wrapping range";
    return false;
  }
  // Ranges never overlap: the rank reserves their window offsets from its
  // node's GPU pool.
  auto next = ranges_.lower_bound(window_off);
  if ((next != ranges_.end() && next->first < window_off + len) ||
      (next != ranges_.begin() && std::prev(next)->first + std::prev(next)->second.len > window_off)) {
    *why = "the window range overlaps one registered before";
    return false;
  }
  CudaDriver* driver = CudaDriver::get(why);
  if (!driver) return false;
  std::string key(reinterpret_cast<const char*>(ipc_handle), 64);
  key += std::to_string(ordinal);
  std::shared_ptr<Mapping> mapping = mappings_[key].lock();
  if (!mapping) {
    mapping = std::make_shared<Mapping>();
    if (!driver->context(ordinal, &mapping->ctx, why)) return false;
    CudaDriver::CUipcMemHandle h;
    std::memcpy(h.reserved, ipc_handle, sizeof h.reserved);
    CudaDriver::CUdeviceptr base = 0;
    CudaDriver::CUresult r =
        driver->in(mapping->ctx, [&] { return driver->ipc_open_(&base, h, 0x1 /* lazy peer */); });
    if (r != 0) {
      *why = driver->error("cuIpcOpenMemHandle", r);
      return false;
    }
    mapping->driver = driver;
    mapping->base = base;
    mappings_[key] = mapping;
  }
  ranges_[window_off] = Range{len, alloc_off, mapping};
  return true;
}

bool CudaIpcMemory::remove(uint64_t window_off) {
  auto it = ranges_.find(window_off);
  if (it == ranges_.end()) return false;
  ranges_.erase(it);  // the mapping closes with its last range
  for (auto m = mappings_.begin(); m != mappings_.end();)
    m = m->second.expired() ? mappings_.erase(m) : std::next(m);
  return true;
}

const CudaIpcMemory::Range* CudaIpcMemory::find(uint64_t off, uint64_t len, uint64_t* into) const {
  auto it = ranges_.upper_bound(off);
  if (it == ranges_.begin()) return nullptr;
  --it;
  uint64_t rel = off - it->first;
  if (rel >= it->second.len || len > it->second.len - rel) return nullptr;
  *into = it->second.alloc_off + rel;
  return &it->second;
}

bool CudaIpcMemory::covers(uint64_t off, uint64_t len) const {
  auto it = ranges_.lower_bound(off + len);  // the first range starting at or past the end
  if (it == ranges_.begin()) return false;
  --it;
  return it->first + it->second.len > off;
}

bool CudaIpcMemory::read(uint64_t off, uint8_t* dst, uint64_t len) {
  uint64_t into;
  const Range* r = find(off, len, &into);
  if (!r) {
    std::cerr << "p2sim: node " << node_ << ": GPU memory read of " << len
              << " bytes crosses the end of a registered CUDA range; refused\n";
    return false;
  }
  Mapping& m = *r->mapping;
  CudaDriver::CUresult e = m.driver->in(m.ctx, [&] { return m.driver->dtoh_(dst, m.base + into, len); });
  if (e != 0)
    std::cerr << "p2sim: node " << node_ << ": GPU memory read of " << len << " bytes: "
              << m.driver->error("cuMemcpyDtoH", e) << "\n";
  return e == 0;
}

bool CudaIpcMemory::write(uint64_t off, const uint8_t* src, uint64_t len) {
  uint64_t into;
  const Range* r = find(off, len, &into);
  if (!r) {
    std::cerr << "p2sim: node " << node_ << ": GPU memory write of " << len
              << " bytes crosses the end of a registered CUDA range; refused\n";
    return false;
  }
  Mapping& m = *r->mapping;
  // From pageable memory cuMemcpyHtoD may return before the bytes are in GPU
  // memory; they must be there before the model says so (the rank may read
  // them through its own context next).
  CudaDriver::CUresult e = m.driver->in(m.ctx, [&] {
    CudaDriver::CUresult r = m.driver->htod_(m.base + into, src, len);
    return r != 0 ? r : m.driver->synchronize_();
  });
  if (e != 0)
    std::cerr << "p2sim: node " << node_ << ": GPU memory write of " << len << " bytes: "
              << m.driver->error("cuMemcpyHtoD", e) << "\n";
  return e == 0;
}

}  // namespace p2
