// What every CUDA kernel file shares: prism's stream, error checks, launch shapes, scratch.
//
// Kernels follow the CPU convention (kernels/registry.h): a host function taking the op's
// Args<T> struct, whose pointers here are device pointers, that launches on `stream()` and
// returns without waiting. Errors in a launch are caught at once (PRISM_CUDA_CHECK_LAUNCH);
// faults inside a kernel surface at the next synchronisation, as an Error naming the call.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/backend.h"
#include "kernels/types.h"

namespace prism::kernels::cuda {

// The one stream prism queues all its GPU work on (created on first use, non-blocking with
// respect to the legacy default stream). One stream keeps ops in program order without events,
// and lets the caching allocator recycle a buffer as soon as its tensor dies.
cudaStream_t stream();

// Throws prism::Error "CUDA error in <what> (<file>:<line>): <cuda's message>" on failure.
void check(cudaError_t err, const char* what, const char* file, int line);

}  // namespace prism::kernels::cuda

#define PRISM_CUDA_CHECK(expr) ::prism::kernels::cuda::check((expr), #expr, __FILE__, __LINE__)
// After a <<<...>>> launch: a bad configuration (too many threads, too much shared memory) is
// reported here, by the kernel's name.
#define PRISM_CUDA_CHECK_LAUNCH(name) \
  ::prism::kernels::cuda::check(cudaGetLastError(), name, __FILE__, __LINE__)

namespace prism::kernels::cuda {

constexpr int kBlock = 256;  // threads per block for 1-D elementwise launches

// Blocks for n elements at `block` threads each, capped so grid-stride loops cover the rest
// (the grid's x dimension holds 2^31 - 1 blocks; 65535 x block threads is plenty in flight).
inline unsigned grid_for(int64_t n, int block = kBlock) {
  int64_t blocks = (n + block - 1) / block;
  if (blocks < 1) blocks = 1;
  if (blocks > 65535) blocks = 65535;
  return static_cast<unsigned>(blocks);
}

// A grid-stride loop: thread t of the grid takes elements t, t + (all threads), ... < total, so
// a grid capped by grid_for covers any n. In a __global__ function:
//   PRISM_GRID_STRIDE(i, n) { out[i] = ...; }
#define PRISM_GRID_STRIDE(i, total)                                             \
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (total); \
       i += int64_t{gridDim.x} * blockDim.x)

// Scratch device memory for the life of one kernel call, from the caching allocator (so a
// second call of the same size costs no cudaMalloc). Freed when it goes out of scope; the
// stream order makes that safe even though the kernel may still be running.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t nbytes) : nbytes_(nbytes) {
    if (nbytes_ > 0) ptr_ = gpu::backend::allocate(nbytes_);
  }
  ~DeviceBuffer() {
    if (ptr_) gpu::backend::release(ptr_, nbytes_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }

 private:
  void* ptr_ = nullptr;
  size_t nbytes_;
};

}  // namespace prism::kernels::cuda
