// Registers a learner's CUDA matmul as a CUDA variant of op `matmul`, the way
// PRISM_REGISTER_KERNEL registers a CPU kernel (kernels/registry.h). Included by the exercise's
// .cu files only (it needs the CUDA runtime):
//
//   void my_cuda_matmul_tiled(const prism::kernels::MatmulArgs<float>& a) { ...<<<...>>>... }
//   PRISM_REGISTER_CUDA_MATMUL(my_cuda_matmul_tiled);
//
// Why a wrapper. prism queues its own GPU work (copies, cuBLAS, the lab's buffers) on one CUDA
// stream of its own, created non-blocking: it does not wait for the default stream, nor the
// default stream for it (kernels/cuda/cuda_common.h). A learner's launch `k<<<grid, block>>>`
// goes to the default stream. So the registered variant is a wrapper that orders the two:
//   1. waits for prism's stream (the inputs are written before the kernel reads them);
//   2. calls the learner's function, which launches on the default stream;
//   3. checks the launch (a bad grid or block size is reported here, by name) and waits for the
//      kernel, so its output is complete before prism reads it, and a fault inside the kernel
//      (an illegal address) is an Error naming this kernel.
// Each call therefore ends with one synchronisation that prism's own variants do not pay
// (they queue their launches and the lab waits once per sample): a few microseconds per call,
// small next to a matmul of 1024^3 or more, large for tiny ones (README.md, "Performance tiers").
#pragma once

#include <cuda_runtime.h>

#include <exception>
#include <string>

#include "kernels/ops/matmul/args.h"
#include "kernels/gpu_runtime.h"
#include "kernels/registry.h"

namespace prism::exercises::cuda_exercise {

using MatmulFn = void (*)(const kernels::MatmulArgs<float>&);

inline void check(cudaError_t err, const char* name, const char* what) {
  if (err == cudaSuccess) return;
  (void)cudaGetLastError();  // clear a launch error; a fault inside a kernel stays (sticky)
  throw Error(std::string("CUDA error ") + what + " '" + name + "': " + cudaGetErrorName(err) +
              ": " + cudaGetErrorString(err));
}

// The registered variant: the learner's launch, ordered with prism's stream (see above).
template <MatmulFn Launch>
void ordered_call(const kernels::MatmulArgs<float>& a, const char* name) {
  kernels::gpu::synchronize();
  Launch(a);
  check(cudaGetLastError(), name, "launching");
  check(cudaDeviceSynchronize(), name, "running");
}

// Registers `fn` under `name` as a user variant of matmul on cuda, from a static initialiser:
// a mistake is reported on stderr (as PRISM_REGISTER_KERNEL does), never thrown.
inline bool register_matmul(const char* name, void (*fn)(const kernels::MatmulArgs<float>&)) {
  try {
    kernels::registry()
        .op("matmul", Device::cuda)
        .add<kernels::MatmulArgs>(name, kernels::VariantTag::user, "learner kernel (CUDA)", fn);
    return true;
  } catch (const std::exception& e) {
    kernels::UserKernelRegistrar::report_registration_error("matmul", name, e.what(), false);
    return false;
  }
}

}  // namespace prism::exercises::cuda_exercise

// Registers the host function `fn` (it launches the learner's kernel) as the CUDA variant "fn" of
// matmul. The lambda has no captures, so it converts to the plain function pointer a kernel is.
#define PRISM_REGISTER_CUDA_MATMUL(fn)                                     \
  [[maybe_unused]] static const bool prism_cuda_exercise_registered_##fn = \
      ::prism::exercises::cuda_exercise::register_matmul(                  \
          #fn, [](const ::prism::kernels::MatmulArgs<float>& a) {          \
            ::prism::exercises::cuda_exercise::ordered_call<&fn>(a, #fn);  \
          })
