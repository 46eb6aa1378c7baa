// Guarded kernel calls: the checker runs the learner's kernel on the very argument struct the
// tensor front end built, but with every output buffer moved into a larger one:
//
//   [ guard zone | output (filled with the fill value) | guard zone ]
//
// the lab's guarded buffer (kernels/opinfo/guarded_buffer.h): every element starts as a
// signalling NaN with a payload no arithmetic produces, so after the call a changed guard, an
// unwritten element and one read before it was written are each found and reported. Then the
// output is copied back to the front end's buffer, so the op returns what the kernel computed.
//
// The guard zones are twice the output's size (at least 65536 elements) on each side, so a
// kernel that writes up to that far off is caught instead of corrupting the heap; after the
// first such write the checker runs that kernel no more. A wilder pointer can still crash the
// program: no checker can stop every out-of-range write.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/ops/attention/args.h"
#include "kernels/ops/conv2d/args.h"
#include "kernels/ops/elementwise/args.h"
#include "kernels/ops/layer_norm/args.h"
#include "kernels/ops/linear_gelu/args.h"
#include "kernels/ops/matmul/args.h"
#include "kernels/ops/reduce/args.h"
#include "kernels/ops/softmax/args.h"
#include "kernels/opinfo/guarded_buffer.h"
#include "kernels/registry.h"

namespace prism::exercises {

// The name the guarded wrapper is registered under (a user variant of the op being checked).
inline constexpr const char* kGuardVariant = "checker_guard";

// The buffer and its report are the lab's (kernels/opinfo/guarded_buffer.h), with long guards.
using opinfo::BufferReport;
using opinfo::GuardedBuffer;

// Guard zones twice the buffer's size, at least 65536 elements, on each side.
inline int64_t checker_guard(int64_t size) {
  return std::max<int64_t>(int64_t{1} << 16, 2 * size);
}

// One buffer of an argument struct that the kernel writes.
struct BufferSlot {
  float** ptr;
  int64_t size;
  const char* name;
  bool must_write;
};

// The buffers each argument struct's kernel writes (float32: the only type a learner's kernel
// has). Conv2dArgs is listed for the forward op, the only conv op an exercise implements.
std::vector<BufferSlot> written_buffers(kernels::UnaryArgs<float>& a);
std::vector<BufferSlot> written_buffers(kernels::ReduceArgs<float>& a);
std::vector<BufferSlot> written_buffers(kernels::MatmulArgs<float>& a);
std::vector<BufferSlot> written_buffers(kernels::SoftmaxArgs<float>& a);
std::vector<BufferSlot> written_buffers(kernels::Conv2dArgs<float>& a);
std::vector<BufferSlot> written_buffers(kernels::LayerNormBackwardArgs<float>& a);
std::vector<BufferSlot> written_buffers(kernels::LinearGeluArgs<float>& a);
std::vector<BufferSlot> written_buffers(kernels::AttentionArgs<float>& a);
// AdamArgs updates param, m and v in place (they are inputs too), so they cannot be poisoned:
// an optimizer exercise checks its kernel without guard zones.

// The guarded wrapper of one kernel, for the op's argument struct Args. A kernel is a plain
// function pointer, so the kernel to wrap and where to put the reports live in statics: the
// checker is single-threaded and checks one kernel at a time.
template <template <class> class Args>
class Guard {
 public:
  // Registers the wrapper as variant kGuardVariant of `op` (once) and points it at `user`.
  static void arm(const std::string& op, const kernels::KernelEntry& user,
                  std::vector<BufferReport>* reports) {
    kernel_ = user.get<Args, float>();
    reports_ = reports;
    kernels::OpKernels& k = kernels::registry().op(op, Device::cpu);
    if (!k.find(kGuardVariant)) {
      k.add<Args>(kGuardVariant, kernels::VariantTag::user, "the checker's guarded call", &run);
    }
  }

  static void run(const Args<float>& given) {
    Args<float> a = given;
    std::vector<BufferSlot> slots = written_buffers(a);
    std::vector<float*> originals;
    std::vector<GuardedBuffer> buffers;
    buffers.reserve(slots.size());
    for (const BufferSlot& s : slots) {
      originals.push_back(*s.ptr);
      buffers.emplace_back(s.size, checker_guard(s.size));
      if (!s.must_write) buffers.back().poison_as_scratch();
      *s.ptr = buffers.back().data();
    }
    kernel_(a);
    for (size_t i = 0; i < slots.size(); ++i) {
      reports_->push_back(buffers[i].inspect(slots[i].name, slots[i].must_write));
      const float* d = buffers[i].data();
      for (int64_t j = 0; j < slots[i].size; ++j) originals[i][j] = d[j];
    }
  }

 private:
  static inline void (*kernel_)(const Args<float>&) = nullptr;
  static inline std::vector<BufferReport>* reports_ = nullptr;
};

}  // namespace prism::exercises
