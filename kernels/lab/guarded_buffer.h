// A float buffer with guard zones on both sides, for checking kernels the way ggml's
// test-backend-ops does: a kernel that writes one element past its output (an edge tile in a
// blocked matmul, a wrong stride) overwrites a guard, and the lab reports it instead of timing
// a kernel that corrupts memory.
//
//   [ guard x kGuard | data x n | guard x kGuard ]
//
// Guards hold a NaN with a payload no arithmetic produces, compared bit for bit. Before a
// validation run the data is filled with an ordinary quiet NaN too, so an output element the
// kernel forgot to write shows up as NaN in the comparison.
//
// The storage is a LabVector (lab_memory.h): host memory on the cpu, managed memory that a CUDA
// kernel can write when the lab runs on cuda; the guards sit in the same block either way.
#pragma once

#include <cstdint>

#include "kernels/lab/lab_memory.h"

namespace prism::lab {

class GuardedBuffer {
 public:
  static constexpr int64_t kGuard = 64;  // one full cache line and more on each side

  explicit GuardedBuffer(int64_t n = 0);

  float* data() { return storage_.data() + kGuard; }
  const float* data() const { return storage_.data() + kGuard; }
  int64_t size() const { return n_; }

  // Every guard element still holds its sentinel.
  bool guards_intact() const;
  // Fills the data with quiet NaNs (a kernel must overwrite every element), or with `value`.
  void poison();
  void fill(float value);

 private:
  int64_t n_;
  LabVector<float> storage_;
};

}  // namespace prism::lab
