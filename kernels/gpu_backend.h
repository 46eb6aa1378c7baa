// The seam between libprism_kernels and the CUDA backend library (libprism_cuda.so).
//
// Why a separate library. Linking cudart and cuBLAS/cuBLASLt (a 540 MB library) into every
// prism program made each run about 220 MB resident before it did any work, so a learner
// benchmarking on the CPU read library pages as "peak RSS". The backend (everything under
// kernels/cuda/) is therefore its own shared library, opened by kernels/gpu_loader.cpp the first
// time something needs the GPU (a gpu:: query, a `.to(cuda)`, `--device cuda`, a CUDA-only kernel
// variant named by a choice). A CPU run never maps it, nor cudart or cuBLAS.
//
// Why a table. The loader finds one C symbol, kBackendEntry, and from it a table of the backend's
// implementations of the gpu:: API (kernels/gpu_runtime.h); gpu::allocate and the rest forward
// to it. One dlsym instead of one per function, and one place to check that the library was
// built from the same prism: the loader refuses a table whose `abi`, `table_size` or
// `fingerprint` differ (a stale libprism_cuda.so from another build), with a message instead of
// a crash. The table passes C++ types (std::string, the structs below, exceptions): the backend
// links libprism_kernels.so itself, so both sides share one compiler, one standard library and
// one registry; the checks exist only to catch a library built from other sources.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/gpu_runtime.h"

namespace prism::kernels {

class Registry;

namespace gpu {

// Bump when the table's fields or their meaning change (the fingerprint catches the rest: it is
// a hash of the headers the two sides share, computed by CMake; kernels/CMakeLists.txt).
inline constexpr int kBackendAbi = 1;

// The one symbol the backend exports:  extern "C" const BackendTable* prism_cuda_backend();
inline constexpr const char* kBackendEntry = "prism_cuda_backend";

struct BackendTable {
  int abi = 0;                   // kBackendAbi of the backend's build; first, so always readable
  size_t table_size = 0;         // sizeof(BackendTable) there
  const char* fingerprint = "";  // the shared headers' hash there
  void (*register_kernels)(Registry&) = nullptr;  // every CUDA kernel and each op's default

  // The gpu:: API (kernels/gpu_runtime.h has the contract of each).
  bool (*available)() = nullptr;
  std::string (*unavailable_reason)() = nullptr;
  DeviceInfo (*device_info)() = nullptr;
  void* (*allocate)(size_t) = nullptr;
  void (*release)(void*, size_t) = nullptr;
  void (*empty_cache)() = nullptr;
  CacheStats (*cache_stats)() = nullptr;
  void* (*allocate_managed)(size_t) = nullptr;
  void (*release_managed)(void*, size_t) = nullptr;
  void (*prefetch_to_device)(const void*, size_t) = nullptr;
  void (*copy_to_device)(void*, const void*, size_t) = nullptr;
  void (*copy_to_host)(void*, const void*, size_t) = nullptr;
  void (*copy_on_device)(void*, const void*, size_t) = nullptr;
  void (*memset_zero)(void*, size_t) = nullptr;
  void (*synchronize)() = nullptr;
  void (*timer_reset)() = nullptr;
  int32_t (*timer_begin)() = nullptr;
  void (*timer_end)(int32_t) = nullptr;
  bool (*timer_read)(int32_t, int64_t*, int64_t*) = nullptr;
  GpuPeaks (*measure_peaks)(int) = nullptr;
  void (*range_push)(const char*) = nullptr;
  void (*range_pop)() = nullptr;
};

using BackendEntry = const BackendTable* (*)();

}  // namespace gpu
}  // namespace prism::kernels
