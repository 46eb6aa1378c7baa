// Guarded kernel calls: the checker runs the learner's kernel on the very argument struct the
// tensor front end built, but with every output buffer moved into a larger one:
//
//   [ guard zone | output (filled with the fill value) | guard zone ]
//
// Every element starts as the same signalling NaN with a payload no arithmetic produces
// (scratch space, which a kernel need not write, starts as an ordinary NaN). After the call:
//   - a guard element that changed was written outside the output (an edge, a wrong stride);
//   - an output element still holding the fill value was never written;
//   - an output element holding a quiet NaN with the fill value's payload was read before it
//     was written (out += ... without setting out first): arithmetic on a NaN keeps its payload.
// Then the output is copied back to the front end's buffer, so the op returns what the kernel
// computed.
//
// The guard zones are twice the output's size (at least 65536 elements) on each side, so a
// kernel that writes up to that far off is caught instead of corrupting the heap; after the
// first such write the checker runs that kernel no more. A wilder pointer can still crash the
// program: no checker can stop every out-of-range write.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/args.h"
#include "kernels/registry.h"

namespace prism::exercises {

// The name the guarded wrapper is registered under (a user variant of the op being checked).
inline constexpr const char* kGuardVariant = "checker_guard";

// What one guarded call did to one buffer the kernel writes.
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

// One buffer with guard zones on both sides, every element set to the fill value.
class GuardedBuffer {
 public:
  // An output (must_write) is filled with the fill value; scratch space with a plain NaN.
  GuardedBuffer(int64_t size, bool must_write);
  float* data() { return storage_.data() + guard_; }
  int64_t size() const { return size_; }
  // What the kernel did to the buffer (see the top of this file).
  BufferReport inspect(const std::string& name, bool must_write) const;

 private:
  int64_t size_, guard_;
  std::vector<float> storage_;
};

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
      buffers.emplace_back(s.size, s.must_write);
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
