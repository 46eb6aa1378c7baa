// A float buffer with guard zones on both sides, the one the lab, the op-description tests and
// the exercise checker all run kernels on (ggml's test-backend-ops checks kernels this way):
//
//   [ guard x guard() | data x size() | guard x guard() ]
//
// Every element starts as the fill value: a signalling NaN with a payload no arithmetic
// produces (arithmetic on it gives a quiet NaN that keeps the payload). After a kernel ran:
//   - a guard element that changed was written outside the buffer (an edge tile, a wrong
//     stride), and the report says how far;
//   - a data element still holding the fill value was never written;
//   - a data element holding a quiet NaN with the fill value's payload was read before it was
//     written (out += ... without setting out first).
// Scratch space, which a kernel need not write, starts as an ordinary quiet NaN instead.
//
// The storage is a CaseVector (case_memory.h): host memory on the cpu, managed memory that a
// CUDA kernel can write when cases are made for cuda; the guards sit in the same block either
// way. The lab keeps guards short (kGuard, a few cache lines: its buffers can be gigabytes); the
// checker asks for long ones (twice the buffer), so that a learner's kernel writing far off is
// reported instead of corrupting the heap.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/opinfo/case_memory.h"

namespace prism::opinfo {

// What a kernel did to one buffer (see the top of this file).
struct BufferReport {
  std::string name;  // "out", "C", "workspace"
  int64_t size = 0;
  bool must_write = true;      // every element must be set (outputs); false for scratch space
  int64_t written_before = 0;  // guard elements changed in front of the buffer
  int64_t lowest = 0;          // the lowest offset written (negative when written_before > 0)
  int64_t written_after = 0;   // guard elements changed behind it
  int64_t highest = 0;         // the highest offset written (>= size when written_after > 0)
  int64_t unwritten = 0;       // elements still holding the fill value
  int64_t first_unwritten = -1;
  int64_t read_first = 0;  // elements holding a NaN with the fill value's payload
  int64_t first_read_first = -1;

  bool out_of_bounds() const { return written_before > 0 || written_after > 0; }
  bool clean() const { return !out_of_bounds() && unwritten == 0 && read_first == 0; }
};

class GuardedBuffer {
 public:
  static constexpr int64_t kGuard = 64;  // the lab's: one full cache line and more on each side

  explicit GuardedBuffer(int64_t n = 0, int64_t guard = kGuard);

  float* data() { return storage_.data() + guard_; }
  const float* data() const { return storage_.data() + guard_; }
  int64_t size() const { return n_; }
  int64_t guard() const { return guard_; }

  // The fill value every element starts as (the signalling NaN described above).
  static float fill_value();
  // Every guard element still holds the fill value.
  bool guards_intact() const;
  // Sets every data element to the fill value (a kernel must overwrite each one), to a plain
  // quiet NaN (scratch: reading it unwritten gives NaNs, as garbage memory would), or to value.
  void poison();
  void poison_as_scratch();
  void fill(float value);
  // What the kernel did to the buffer; `must_write` checks the data too.
  BufferReport inspect(const std::string& name, bool must_write) const;

 private:
  int64_t n_, guard_;
  CaseVector<float> storage_;
};

}  // namespace prism::opinfo
