// Reporting an out-of-range index found on the device (gather, index_select, cross_entropy's
// labels) as a prism::Error, the way the CPU kernels do.
//
// A kernel cannot throw. A thread that meets a bad index skips the access it would have made
// (so nothing outside the buffers is read or written) and records its position with an
// integer atomicMin into one 64-bit word; after the launch the host copies that word back.
// atomicMin keeps the smallest position, which is the first bad index in the order the CPU
// kernel walks, so the message names the same index the CPU would (an integer min does not
// depend on the order threads arrive in, unlike a float sum).
//
// The price is one wait for the device per call (the copy back has to see the kernel's
// result): a training loop that calls these ops every step loses the overlap of the next
// step's launches with this step's kernels. That is the cost of an error message instead of
// a silent read of someone else's memory; PyTorch pays it differently (a device-side assert
// that poisons the CUDA context).
#pragma once

#include <cstdint>

#include "kernels/cuda/cuda_common.h"

namespace prism::kernels::cuda {

using BadIndexWord = unsigned long long;  // what atomicMin on 64 bits takes
constexpr BadIndexWord kNoBadIndex = ~BadIndexWord{0};

__device__ inline void flag_bad_index(BadIndexWord* first, int64_t position) {
  atomicMin(first, static_cast<BadIndexWord>(position));
}

// The 64-bit word on the device, set to "none" on creation (queued on prism's stream, so it
// is in place before any kernel launched afterwards reads it).
class FirstBadIndex {
 public:
  FirstBadIndex() : word_(sizeof(BadIndexWord)) {
    PRISM_CUDA_CHECK(cudaMemsetAsync(word_.as<void>(), 0xFF, sizeof(BadIndexWord), stream()));
  }
  BadIndexWord* device() const { return word_.as<BadIndexWord>(); }
  // Waits for the kernels queued so far; the smallest flagged position, or -1 if none.
  int64_t read() const {
    BadIndexWord v = kNoBadIndex;
    gpu::backend::copy_to_host(&v, word_.as<void>(), sizeof v);
    return v == kNoBadIndex ? -1 : static_cast<int64_t>(v);
  }

 private:
  DeviceBuffer word_;
};

// The int64 at `p` (a device pointer), for an error message: waits for the device.
inline int64_t read_device_int64(const int64_t* p) {
  int64_t v = 0;
  gpu::backend::copy_to_host(&v, p, sizeof v);
  return v;
}

}  // namespace prism::kernels::cuda
