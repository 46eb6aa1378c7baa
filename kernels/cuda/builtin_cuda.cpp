// Every built-in CUDA kernel (each file registers itself: kernels/kernel_files.h), and each
// op's default variant on the GPU. Called by the loader (kernels/gpu_loader.cpp) when it has
// opened the backend library and checked it, after the CPU kernels.
//
// Defaults follow the CPU rule, "the fastest correct variant", measured on an NVIDIA H200
// (2026-11-26: `prism lab OP --device cuda` at each op's own sizes, `.ci/gpu-check run STAGE
// defaults`; the tables are in docs/PERFORMANCE.md, "GPU (CUDA)"). Where two variants tie at
// small sizes (a launch costs about 3 us there) the one that wins at the larger sizes is kept.
#include "kernels/cuda/kernel_list.h"

namespace prism::kernels {

KernelFiles& cuda_kernel_files() {
  static KernelFiles files;
  return files;
}

namespace cuda {

void register_cuda_kernels(Registry& r) {
  cuda_kernel_files().register_all(r);

  // A warp or block per row with a tree: 4.5 us against one thread per row's 135 us at
  // 4096 x 1024 (sum); the two tie at 128 x 10, where the launch is the cost.
  for (const char* op : {"sum", "mean", "max", "argmax"}) {
    r.op(op, Device::cuda).set_default("optimized");
  }
  // One read with a running max: 21 us against 29 at 4096 x 1024, 61 against 79 transposed
  // (log_softmax ties at 4096 x 1024: 19.8 against 19.1 us).
  r.op("softmax", Device::cuda).set_default("online");
  r.op("log_softmax", Device::cuda).set_default("online");
  // Measured against intent: the two-pass kernel (three reads of each row, the last two from
  // cache) beats Welford's one pass 1.8 to 2.7x (9.7 against 24.7 us at 4096 x 768): Welford's
  // update costs a float64 division per element.
  r.op("layer_norm", Device::cuda).set_default("two_pass");
  r.op("cross_entropy", Device::cuda).set_default("fused");  // 114 against 298 us at 512 x 50257
  // 3.4 and 4.8x over the per-tensor updates at 4M parameters.
  for (const char* op : {"sgd_update", "adam_update"}) r.op(op, Device::cuda).set_default("fused");
  // One pass over memory where naive makes a pass per step (rms_norm) or per function (swiglu):
  // 8.8 against 457 us (rms_norm, 4096 x 768), 245 against 353 us (swiglu, 4096 x 11008).
  for (const char* op : {"rms_norm", "rms_norm_backward", "swiglu", "swiglu_backward"}) {
    r.op(op, Device::cuda).set_default("fused");
  }
  // cuBLAS GEMMs on unfolded patches: 269 against 1035 us (8 x 64 x 56 x 56, 64 filters).
  // Only the one-channel first layer of the LeNet CNN is faster naive (18.6 against 22.9 us).
  for (const char* op : {"conv2d", "conv2d_backward_input", "conv2d_backward_weight"}) {
    r.op(op, Device::cuda).set_default("im2col");
  }
  // cuBLAS: "optimized" reaches 79% of it at 4096 (40.4 against 51.0 TFLOP/s) but 19% at the
  // MLP's 128 x 784 x 256, where cuBLAS picks a kernel for the shape.
  r.op("matmul", Device::cuda).set_default("reference");
  // Measured against intent: the L x L scores through cuBLAS beat the flash kernel at every
  // length measured, 3.8x at L = 256 down to 1.7x at L = 8192 (121 against 372 us at L = 1024,
  // 2.4 against 4.1 ms at L = 8192, d = 64; backward 303 against 887 us at 1024). The flash
  // kernel is scalar float32 at 3 to 8 TFLOP/s where cuBLAS runs the two GEMMs at up to 51.
  // naive holds batch x heads x L^2 floats of scores (1 GiB at 4 heads and L = 8192): choose
  // `--kernel attention=flash` where that does not fit.
  r.op("attention", Device::cuda).set_default("naive");
  r.op("attention_backward", Device::cuda).set_default("naive");
  // Measured against intent: cuBLAS then a bias + GELU pass beats the fused optimized tile
  // (15.9 against 103 us at 128 x 784 x 256, 149 against 185 at 1024 x 768 x 3072): the
  // tile's GEMM is slower than cuBLAS's by more than the pass it saves.
  r.op("linear_gelu", Device::cuda).set_default("unfused");
}

}  // namespace cuda
}  // namespace prism::kernels
