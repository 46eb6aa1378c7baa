// Where the lab's buffers live: one allocator for every buffer a kernel may be handed.
//
// The lab's adapters (kernels/opinfo/*.cpp) fill inputs on the host and pass raw pointers to the
// variant under test. On the CPU any memory will do; a CUDA kernel needs memory the device can
// reach. So every such buffer is a CaseVector, whose allocator asks the lab's device setting:
//   cpu  (the default): ordinary host memory, 64-byte aligned (a cache line, an AVX-512 vector);
//   cuda (set by run_lab for `--device cuda`): CUDA managed memory (gpu::allocate_managed), one
//        pointer valid on the host and on the GPU, so the adapters stay as they are and the CPU
//        reference can run on exactly the inputs the GPU kernel reads.
// Each allocation remembers which kind it is, so a buffer made under one setting is freed the
// right way under another. A plain std::vector whose pointer reaches a CUDA kernel would be a
// host pointer on the device: an illegal-address fault. Keep every kernel-visible buffer here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <vector>

#include "kernels/types.h"

namespace prism::opinfo {

// The device new lab buffers are made for (process-wide; cpu unless run_lab set cuda).
Device case_device();
void set_case_device(Device d);

// Sets the lab device for a scope and restores the previous one.
class ScopedCaseDevice {
 public:
  explicit ScopedCaseDevice(Device d) : saved_(case_device()) { set_case_device(d); }
  ~ScopedCaseDevice() { set_case_device(saved_); }
  ScopedCaseDevice(const ScopedCaseDevice&) = delete;
  ScopedCaseDevice& operator=(const ScopedCaseDevice&) = delete;

 private:
  Device saved_;
};

// `nbytes` for a lab buffer: managed memory when case_device() is cuda, else 64-byte aligned host
// memory. Never nullptr (0 bytes still gives a distinct block).
void* case_allocate(size_t nbytes);
// Frees a block from case_allocate the way it was made, whatever case_device() says now.
void case_deallocate(void* p, size_t nbytes) noexcept;
// True if p is a live managed block from case_allocate.
bool case_is_managed(const void* p);
// Bytes in live managed blocks (0 on the cpu).
int64_t case_managed_bytes();
// Queues a prefetch of every live managed block to the GPU (before timing, so the first timed
// calls do not pay for page migration). A no-op when there are none. Does not wait.
void prefetch_case_buffers();

// A std::allocator-compatible allocator over case_allocate. Stateless: any two compare equal.
template <class T>
struct CaseAllocator {
  using value_type = T;
  static_assert(alignof(T) <= 64, "lab buffers are 64-byte aligned");

  CaseAllocator() noexcept = default;
  template <class U>
  CaseAllocator(const CaseAllocator<U>&) noexcept {}  // NOLINT: rebinding is implicit

  T* allocate(size_t n) {
    if (n > std::numeric_limits<size_t>::max() / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(case_allocate(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept { case_deallocate(p, n * sizeof(T)); }
};

template <class T, class U>
bool operator==(const CaseAllocator<T>&, const CaseAllocator<U>&) noexcept {
  return true;
}

template <class T>
using CaseVector = std::vector<T, CaseAllocator<T>>;

}  // namespace prism::opinfo
