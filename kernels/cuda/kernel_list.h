// What every built-in CUDA kernel file includes besides its op's args.h: the registry, and
// PRISM_CUDA_KERNELS, with which the file registers itself (kernels/kernel_files.h). The list is
// filled when the backend module is opened and run by register_cuda_kernels, which the loader
// calls only after it has checked the module: a stale module registers nothing. Registering
// touches no GPU: kernels only run when a CUDA tensor reaches them.
#pragma once

#include "kernels/kernel_files.h"
#include "kernels/registry.h"

namespace prism::kernels {

KernelFiles& cuda_kernel_files();  // the CUDA files' list, defined in kernels/cuda/builtin_cuda.cpp

namespace cuda {
// Every recorded file, in order, then each op's default on cuda from its definition
// (Registry::set_defaults).
void register_cuda_kernels(Registry& r);
}  // namespace cuda

}  // namespace prism::kernels

#define PRISM_CUDA_KERNELS(order, fn) \
  PRISM_KERNEL_FILE(::prism::kernels::cuda_kernel_files(), order, fn)
