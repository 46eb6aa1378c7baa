// Every built-in CUDA kernel (each file registers itself: kernels/kernel_files.h), and each
// op's default variant on the GPU. Called by the loader (kernels/gpu_loader.cpp) when it has
// opened the backend library and checked it, after the CPU kernels.
//
// Defaults follow the CPU rule, "the fastest correct variant", but on the GPU that is a claim
// to be measured on a GPU (docs/PERFORMANCE.md); until then the default is the variant built
// the way fast GPU code is built (cuBLAS for matmul, one-pass online softmax, flash attention).
#include "kernels/cuda/kernel_list.h"

namespace prism::kernels {

KernelFiles& cuda_kernel_files() {
  static KernelFiles files;
  return files;
}

namespace cuda {

void register_cuda_kernels(Registry& r) {
  cuda_kernel_files().register_all(r);

  // A warp or block per row with a tree beats one thread per row wherever rows are long.
  for (const char* op : {"sum", "mean", "max", "argmax"}) {
    r.op(op, Device::cuda).set_default("optimized");
  }
  // The fused variant of each pair reads and writes fewer bytes (a memory-bound trade).
  r.op("softmax", Device::cuda).set_default("online");
  r.op("log_softmax", Device::cuda).set_default("online");
  r.op("layer_norm", Device::cuda).set_default("one_pass");
  r.op("cross_entropy", Device::cuda).set_default("fused");
  for (const char* op : {"sgd_update", "adam_update"}) r.op(op, Device::cuda).set_default("fused");
  // One pass over memory where naive makes a pass per step (rms_norm) or per function (swiglu).
  for (const char* op : {"rms_norm", "rms_norm_backward", "swiglu", "swiglu_backward"}) {
    r.op(op, Device::cuda).set_default("fused");
  }
  // cuBLAS GEMMs on unfolded patches; naive is the one-thread-per-output baseline.
  for (const char* op : {"conv2d", "conv2d_backward_input", "conv2d_backward_weight"}) {
    r.op(op, Device::cuda).set_default("im2col");
  }
  // cuBLAS until a GPU measurement shows "optimized" close enough (issue 5: >= 70 %).
  r.op("matmul", Device::cuda).set_default("reference");
  // O(L) memory and one pass over K and V, where naive writes and reads L^2 scores per head.
  r.op("attention", Device::cuda).set_default("flash");
  r.op("attention_backward", Device::cuda).set_default("flash");
  // The output crosses DRAM once instead of three times (GEMM, then bias + GELU).
  r.op("linear_gelu", Device::cuda).set_default("fused");
}

}  // namespace cuda
}  // namespace prism::kernels
