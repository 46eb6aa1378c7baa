// Every built-in CUDA kernel (each file registers itself: kernels/kernel_files.h), then each
// op's default variant on the GPU from its definition (kernels/ops/<op>/op.h). Called by the
// loader (kernels/gpu_loader.cpp) when it has opened the backend library and checked it, after
// the CPU kernels.
//
// The GPU defaults follow the CPU rule, "the fastest correct variant", measured on an NVIDIA
// H200 (`prism lab OP --device cuda` at each op's own sizes; docs/PERFORMANCE.md, "GPU (CUDA)").
// Where two variants tie at small sizes (there a launch is the whole cost) the one that wins at
// the larger sizes is kept.
#include "kernels/cuda/kernel_list.h"

namespace prism::kernels {

KernelFiles& cuda_kernel_files() {
  static KernelFiles files;
  return files;
}

namespace cuda {

void register_cuda_kernels(Registry& r) {
  cuda_kernel_files().register_all(r);
  r.set_defaults(Device::cuda);
}

}  // namespace cuda
}  // namespace prism::kernels
