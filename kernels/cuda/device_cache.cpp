// The caching device allocator (contract: kernels/gpu_runtime.h).
//
// Why. cudaMalloc and cudaFree are slow (tens of microseconds) and cudaFree waits for the whole
// device, which would put a host-device synchronisation inside every op that frees a tensor.
// A training step asks for the same sizes in the same order every step, so freed buffers are
// kept by size class and handed out again.
//
// Why it is safe without events. All prism work runs on one stream. A buffer freed by the host
// may still be read by kernels queued earlier; whoever receives it next writes it from a kernel
// queued later on the same stream, so the write runs after those reads.
//
// Size classes: 512-byte granularity below 1 MiB, then eight classes per power of two (at most
// 12.5% waste), the same rule as the host cache (tensor/host_allocator.h).
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/cuda/backend.h"
#include "kernels/cuda/cuda_common.h"
#include "kernels/types.h"

namespace prism::kernels::gpu::backend {

namespace {

size_t size_class(size_t n) {
  constexpr size_t kSmallStep = 512;
  constexpr size_t kSmallLimit = size_t{1} << 20;
  if (n <= kSmallLimit) return (n + kSmallStep - 1) / kSmallStep * kSmallStep;
  size_t pow2 = kSmallLimit;
  while (pow2 * 2 < n) pow2 *= 2;  // pow2 < n <= 2 * pow2
  const size_t step = pow2 / 8;
  return (n + step - 1) / step * step;
}

struct Cache {
  std::mutex mu;
  std::map<size_t, std::vector<void*>> free_lists;  // size class -> free buffers
  CacheStats stats;
  int64_t in_use_bytes = 0;

  // Gives every cached buffer back to the driver; caller holds mu.
  void drain() {
    for (auto& [bytes, list] : free_lists) {
      for (void* p : list) {
        (void)cudaFree(p);
        stats.reserved_bytes -= static_cast<int64_t>(bytes);
        stats.cached_bytes -= static_cast<int64_t>(bytes);
      }
    }
    free_lists.clear();
  }
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: tensors may die during static destruction
  return *c;
}

std::string mib(int64_t bytes) {
  return std::to_string(bytes / (1024 * 1024)) + " MiB";
}

}  // namespace

void* allocate(size_t nbytes) {
  require("allocate");
  const size_t cls = size_class(nbytes);
  Cache& c = cache();
  std::lock_guard lock(c.mu);
  auto it = c.free_lists.find(cls);
  if (it != c.free_lists.end() && !it->second.empty()) {
    void* p = it->second.back();
    it->second.pop_back();
    c.stats.cached_bytes -= static_cast<int64_t>(cls);
    c.stats.cache_hits++;
    c.in_use_bytes += static_cast<int64_t>(cls);
    return p;
  }
  void* p = nullptr;
  cudaError_t err = cudaMalloc(&p, cls);
  if (err == cudaErrorMemoryAllocation) {
    // Out of memory: cached buffers of other sizes may be what is missing. Give them back, retry.
    // Kernels queued earlier may still read them: wait for the stream before freeing.
    (void)cudaGetLastError();
    PRISM_CUDA_CHECK(cudaStreamSynchronize(cuda::stream()));
    c.drain();
    err = cudaMalloc(&p, cls);
  }
  if (err != cudaSuccess && err != cudaErrorMemoryAllocation) {
    cuda::check(err, "cudaMalloc", __FILE__, __LINE__);  // not memory: an earlier fault, say
  }
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    throw Error("allocate: out of memory on the GPU asking for " + std::to_string(nbytes) +
                " bytes (" + mib(static_cast<int64_t>(nbytes)) + "); prism tensors hold " +
                mib(c.in_use_bytes) + ": " + cudaGetErrorString(err));
  }
  c.stats.driver_allocs++;
  c.stats.reserved_bytes += static_cast<int64_t>(cls);
  c.in_use_bytes += static_cast<int64_t>(cls);
  return p;
}

void release(void* p, size_t nbytes) {
  if (!p) return;
  const size_t cls = size_class(nbytes);
  Cache& c = cache();
  std::lock_guard lock(c.mu);
  c.free_lists[cls].push_back(p);
  c.stats.cached_bytes += static_cast<int64_t>(cls);
  c.in_use_bytes -= static_cast<int64_t>(cls);
}

void empty_cache() {
  if (!available()) return;
  Cache& c = cache();
  std::lock_guard lock(c.mu);
  // cudaFree does not wait for queued kernels that may still read a cached buffer; drain the
  // stream first.
  PRISM_CUDA_CHECK(cudaStreamSynchronize(cuda::stream()));
  c.drain();
}

CacheStats cache_stats() {
  Cache& c = cache();
  std::lock_guard lock(c.mu);
  return c.stats;
}

}  // namespace prism::kernels::gpu::backend
