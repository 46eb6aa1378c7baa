// The instrumented dispatcher every op front end goes through (DESIGN.md, "life of an op").
//
//   static detail::OpHandle op(kernels::ops::exp); // the op's definition (kernels/ops/<op>/op.h)
//   const auto& k = op.kernel(x.device(), x.dtype());   // registry choice for this call
//   detail::OpRecordScope rec(op, k, x.device(), {&x}, [&] { return cost; });
//   Tensor y = empty(...);                         // allocation inside the record: attributed
//   k.get<UnaryArgs, float>()(args);
//
// When no profiling session is recording, OpRecordScope costs one atomic load and a branch;
// the cost lambda and the shape list are only built while recording.
#pragma once

#include <initializer_list>

#include "kernels/registry.h"
#include "profiler/recorder.h"
#include "tensor/tensor.h"

namespace prism::detail {

class OpHandle {
 public:
  // By its definition, never a string: the op is named in one place (kernels/op_def.h).
  explicit OpHandle(const kernels::OpDef& def) : name_(def.name) {}
  const char* name() const { return name_; }
  // The kernel variant that runs for this device and dtype now (overrides applied).
  const kernels::KernelEntry& kernel(Device device, DType dtype);
  // The variant whose memory a call of kernel k has: k itself, or for the meta device's entry
  // the variant the CPU would run, so that a dry run allocates the scratch a real run does (a
  // front end sizes its workspace from this entry's tag, never from the meta entry, which needs
  // none). No second lookup on a real device.
  const kernels::KernelEntry& planned(const kernels::KernelEntry& k, DType dtype) {
    return k.meta ? kernel(Device::cpu, dtype) : k;
  }

 private:
  const char* name_;
  const kernels::OpKernels* per_device_[2] = {nullptr, nullptr};  // cpu, cuda (meta needs none)
};

// Opens a profile record for the lifetime of the object (closed on exceptions too).
//
// A GPU op also gets an NVTX range named after the op, always (Nsight Systems then shows prism's
// names; without a tool attached a range costs a pointer check), and, while recording, a pair
// of CUDA events around its kernels, read when the session stops (profiler::GpuTimerHooks).
class OpRecordScope {
 public:
  template <class CostFn>
  OpRecordScope(const char* op, const char* variant, Device device,
                std::initializer_list<const Tensor*> inputs, CostFn&& cost) {
    if (device == Device::cuda) gpu_open(op);
    if (!profiler::recording()) return;
    open(op, variant, device, inputs, named_cost(op, cost));
    if (device == Device::cuda) gpu_time();
  }
  ~OpRecordScope() {
    if (gpu_slot_ >= 0) gpu_time_end();
    if (handle_ >= 0) profiler::close_op(handle_);
    if (gpu_range_) gpu_close();
  }
  OpRecordScope(const OpRecordScope&) = delete;
  OpRecordScope& operator=(const OpRecordScope&) = delete;

 private:
  // cost(), with a count that overflows int64 (kernels/costs.h) reported under the op's name.
  template <class CostFn>
  static profiler::Cost named_cost(const char* op, CostFn& cost) {
    try {
      return cost();
    } catch (const Error& e) {
      throw Error(std::string(op) + ": " + e.what());
    }
  }
  void open(const char* op, const char* variant, Device device,
            std::initializer_list<const Tensor*> inputs, const profiler::Cost& cost);
  void gpu_open(const char* op);
  void gpu_close();
  void gpu_time();
  void gpu_time_end();
  int32_t handle_ = -1;
  int32_t gpu_slot_ = -1;
  bool gpu_range_ = false;
};

// Checks shared by the front ends; each throws an Error naming the op.
void check_defined(const char* op, const Tensor& t);
void check_float(const char* op, const Tensor& t);
void check_same_dtype(const char* op, const Tensor& a, const Tensor& b);
void check_same_device(const char* op, const Tensor& a, const Tensor& b);
// For an op with no CUDA kernel: t is on the cpu, or on the meta device, which runs no kernel
// (a dry run still gets the op's shapes, costs and memory).
void check_cpu_or_meta(const char* op, const Tensor& t);
// A linear layer's operands (linear, linear_gelu): float x [..., in], weight [out, in] and an
// undefined or [out] bias, all of one dtype and device.
void check_linear_operands(const char* op, const Tensor& x, const Tensor& weight,
                           const Tensor& bias);

// A new, contiguous, uninitialised tensor on the same device as `like`.
Tensor empty_like_shape(const Dims& shape, DType dtype, Device device);

}  // namespace prism::detail
