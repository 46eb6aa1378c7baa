// Registering a CUDA variant of an op the CPU already has.
#pragma once

#include "kernels/registry.h"

namespace prism::kernels::cuda {

// The op's CUDA kernels, registered on first use with the CPU registration's cost formula:
// one formula per op whatever the device (the FLOPs and bytes of an op do not depend on where
// it runs), copied from the CPU entry rather than written twice. The CPU kernels are registered
// when the registry is created (builtin.cpp), before the loader registers the CUDA ones.
inline OpKernels& cuda_op(Registry& r, const char* op) {
  return r.op(op, Device::cuda, r.at(op, Device::cpu).cost_formula());
}

}  // namespace prism::kernels::cuda
