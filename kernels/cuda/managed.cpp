// Managed (unified) memory for the kernel lab (contract: kernels/gpu_runtime.h).
//
// Why managed memory there. The lab's adapters fill inputs on the host and hand raw pointers to
// whichever kernel they are timing; with cudaMallocManaged the same pointer is valid on both
// sides, so one adapter serves the CPU and the CUDA variants, and the CPU reference can run on
// exactly the inputs the GPU kernel reads. Tensors never use this: they live in device memory
// from the caching allocator (device_cache.cpp) and move by explicit copies.
//
// Caveats a reader of lab timings should know. A page touched by the host migrates back on the
// next device access (a page fault on the GPU, microseconds per page), so the lab prefetches a
// case's buffers to the device and warms up before it times. On devices without concurrent
// managed access (cudaDevAttrConcurrentManagedAccess = 0: Windows, some older GPUs) the host
// must not touch managed memory while any kernel runs; the lab synchronises before every host
// read or write that follows GPU work.
#include <cuda_runtime.h>

#include <string>

#include "kernels/cuda/backend.h"
#include "kernels/cuda/cuda_common.h"
#include "kernels/types.h"

namespace prism::kernels::gpu::backend {

namespace {

// The current device and whether it can take prefetches, asked once.
struct PrefetchSupport {
  int device = 0;
  bool ok = false;
};

const PrefetchSupport& prefetch_support() {
  static const PrefetchSupport s = [] {
    PrefetchSupport r;
    PRISM_CUDA_CHECK(cudaGetDevice(&r.device));
    int concurrent = 0;
    PRISM_CUDA_CHECK(
        cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, r.device));
    r.ok = concurrent != 0;
    return r;
  }();
  return s;
}

}  // namespace

void* allocate_managed(size_t nbytes) {
  require("allocate_managed");
  if (nbytes == 0) return nullptr;
  void* p = nullptr;
  const cudaError_t err = cudaMallocManaged(&p, nbytes, cudaMemAttachGlobal);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    throw Error("allocate_managed: cannot allocate " + std::to_string(nbytes) +
                " bytes of managed memory: " + cudaGetErrorName(err) + ": " +
                cudaGetErrorString(err));
  }
  return p;
}

void release_managed(void* p, size_t /*nbytes*/) {
  if (!p) return;
  // cudaFree waits for the device before it frees, so a kernel still reading p is safe. During
  // process exit the runtime may already be unloading (cudaErrorCudartUnloading): nothing to do.
  if (cudaFree(p) != cudaSuccess) (void)cudaGetLastError();
}

void prefetch_to_device(const void* p, size_t nbytes) {
  if (!p || nbytes == 0) return;
  require("prefetch_to_device");
  const PrefetchSupport& s = prefetch_support();
  if (!s.ok) return;  // a hint only: pages still migrate on first touch
#if CUDART_VERSION >= 13000
  // CUDA 13 names the destination as a cudaMemLocation (device, host or a NUMA node) and adds
  // a flags word.
  cudaMemLocation where{};
  where.type = cudaMemLocationTypeDevice;
  where.id = s.device;
  PRISM_CUDA_CHECK(cudaMemPrefetchAsync(p, nbytes, where, 0, cuda::stream()));
#else
  PRISM_CUDA_CHECK(cudaMemPrefetchAsync(p, nbytes, s.device, cuda::stream()));
#endif
}

}  // namespace prism::kernels::gpu::backend
