#include "tensor/dispatch.h"

#include <string>

#include "kernels/gpu_runtime.h"

namespace prism::detail {

const kernels::KernelEntry& OpHandle::kernel(Device device, DType dtype) {
  if (device == Device::meta) return kernels::meta_entry();
  const kernels::OpKernels*& k = per_device_[static_cast<int>(device)];
  if (!k) {
    kernels::load_env_choices();  // PRISM_KERNELS, read once; a bad value is an Error here
    k = &kernels::registry().at(name_, device);
  }
  return k->select(dtype);
}

void OpRecordScope::open(const char* op, const char* variant, Device device,
                         std::initializer_list<const Tensor*> inputs, const profiler::Cost& cost) {
  profiler::ShapeList shapes;
  for (const Tensor* t : inputs) {
    if (t && t->defined()) shapes.add(t->shape().data(), t->dim());
  }
  handle_ = profiler::open_op(op, variant, device_name(device), cost, shapes);
}

namespace {
const profiler::GpuTimerHooks kGpuTimer{&kernels::gpu::timer_reset, &kernels::gpu::timer_read};
}  // namespace

void OpRecordScope::gpu_open(const char* op) {
  kernels::gpu::range_push(op);
  gpu_range_ = true;
}

void OpRecordScope::gpu_close() {
  kernels::gpu::range_pop();
}

void OpRecordScope::gpu_time() {
  // Installed on first use, not at start-up: a program that never runs a GPU op never asks.
  static const bool installed = [] {
    profiler::set_gpu_timer_hooks(&kGpuTimer);
    return true;
  }();
  (void)installed;
  if (!kernels::gpu::available()) return;  // the op will fail with its own, clearer error
  try {
    gpu_slot_ = kernels::gpu::timer_begin();
  } catch (const Error&) {
    // Called from the constructor after the record opened: throwing here would leave it (and
    // the NVTX range) open, since no destructor runs. The op goes untimed on the GPU instead;
    // a broken device reports itself at the op's own next CUDA call.
    gpu_slot_ = -1;
  }
  if (gpu_slot_ >= 0) profiler::attach_gpu_slot(handle_, gpu_slot_);
}

void OpRecordScope::gpu_time_end() {
  kernels::gpu::timer_end(gpu_slot_);
}

void check_defined(const char* op, const Tensor& t) {
  if (!t.defined()) throw Error(std::string(op) + ": got an undefined tensor");
}

void check_float(const char* op, const Tensor& t) {
  check_defined(op, t);
  if (t.dtype() == DType::i64) {
    throw Error(std::string(op) + ": needs a float32 or float64 tensor, got int64 " +
                t.shape().str());
  }
}

void check_same_dtype(const char* op, const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype()) {
    throw Error(std::string(op) + ": dtypes differ: " + dtype_name(a.dtype()) + " " +
                a.shape().str() + " and " + dtype_name(b.dtype()) + " " + b.shape().str());
  }
}

void check_same_device(const char* op, const Tensor& a, const Tensor& b) {
  if (a.device() != b.device()) {
    throw Error(std::string(op) + ": tensors are on different devices: " + device_name(a.device()) +
                " and " + device_name(b.device()));
  }
}

void check_linear_operands(const char* op, const Tensor& x, const Tensor& weight,
                           const Tensor& bias) {
  check_float(op, x);
  check_float(op, weight);
  check_same_dtype(op, x, weight);
  check_same_device(op, x, weight);
  const std::string name(op);
  if (weight.dim() != 2) {
    throw Error(name + ": weight must be 2-D [out, in], got " + weight.shape().str());
  }
  if (x.dim() == 0 || x.size(-1) != weight.size(1)) {
    throw Error(name + ": input " + x.shape().str() + " must end in " +
                std::to_string(weight.size(1)) + " features (weight " + weight.shape().str() + ")");
  }
  if (bias.defined()) {
    check_float(op, bias);
    check_same_dtype(op, x, bias);
    check_same_device(op, x, bias);
    if (bias.dim() != 1 || bias.size(0) != weight.size(0)) {
      throw Error(name + ": bias must be 1-D [" + std::to_string(weight.size(0)) +
                  "] (one per output of weight " + weight.shape().str() + "), got " +
                  bias.shape().str());
    }
  }
}

void check_cpu_or_meta(const char* op, const Tensor& t) {
  if (t.device() != Device::cpu && t.device() != Device::meta) {
    throw Error(std::string(op) + ": only implemented on the cpu, got a " +
                device_name(t.device()) + " tensor");
  }
}

Tensor empty_like_shape(const Dims& shape, DType dtype, Device device) {
  auto impl = std::make_shared<TensorImpl>();
  // Every op's output is made here; its shape follows from the inputs, which a broadcast of
  // expanded views can make absurd, so the size is checked before it is used.
  const ShapeSize size = checked_shape_size(shape, dtype, "cannot allocate a tensor");
  impl->storage = Storage::allocate(size.nbytes, device, current_alloc_role());
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

}  // namespace prism::detail
