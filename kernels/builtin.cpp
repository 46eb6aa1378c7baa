// The list of every built-in CPU kernel, and each op's default variant. The CUDA kernels are
// registered when the CUDA backend library is loaded, on first GPU use (kernels/gpu_loader.cpp,
// kernels/cuda/builtin_cuda.cpp), so that a CPU run never maps cudart or cuBLAS.
//
// Defaults are the fastest correct variant we have measured (docs/PERFORMANCE.md). Eigen's
// reference is still the fastest max/argmax we have, and the naive loops are the only
// elementwise, copy and index kernels.
#include "kernels/cpu/kernel_list.h"

namespace prism::kernels {

void register_builtin_kernels(Registry& r) {
  cpu::register_elementwise_naive(r);
  cpu::register_copy(r);
  cpu::register_reduce_naive(r);
  cpu::register_reduce_eigen(r);
  cpu::register_reduce_optimized(r);
  cpu::register_matmul_naive(r);
  cpu::register_matmul_eigen(r);
  cpu::register_matmul_reordered(r);
  cpu::register_matmul_blocked(r);
  cpu::register_matmul_optimized(r);
  cpu::register_softmax_naive(r);
  cpu::register_softmax_eigen(r);
  cpu::register_softmax_online(r);
  cpu::register_layer_norm(r);
  cpu::register_rms_norm(r);  // fused registered first: the default
  cpu::register_swiglu(r);    // fused registered first: the default
  cpu::register_cross_entropy(r);
  cpu::register_index(r);
  cpu::register_conv_naive(r);
  cpu::register_conv_im2col(r);
  cpu::register_pool_naive(r);
  cpu::register_pool_optimized(r);
  cpu::register_optim_fused(r);
  cpu::register_optim_per_tensor(r);
  cpu::register_attention_naive(r);
  cpu::register_attention_flash(r);
  cpu::register_linear_gelu_unfused(r);
  cpu::register_linear_gelu_fused(r);

  for (const char* op : {"max", "argmax"}) r.op(op, Device::cpu).set_default("reference");
  // sum, mean: 32 double lanes per row, 5-7x Eigen's strided rowwise sum, which does not
  // vectorize (prism lab sum, docs/PERFORMANCE.md).
  for (const char* op : {"sum", "mean"}) r.op(op, Device::cpu).set_default("optimized");
  // matmul: the packed AVX-512 kernel is 1.27x Eigen at n = 1024 and 2048 on one thread (102 vs
  // 80 GFLOP/s, 90% of the FMA peak) and 1.24-1.38x on two, and ahead on the MLP's and the
  // conv's shapes too (docs/PERFORMANCE.md, "Matmul ladder").
  r.op("matmul", Device::cpu).set_default("optimized");
  // conv2d and its gradients: im2col + the selected matmul (the packed kernel by default) is
  // 18-37x the direct loops (docs/PERFORMANCE.md, "Convolution and pooling kernels").
  // max_pool2d: 2x2 windows without branches, ~1.7x the naive scan (pool_optimized.cpp).
  r.op("max_pool2d", Device::cpu).set_default("optimized");
  for (const char* op : {"conv2d", "conv2d_backward_input", "conv2d_backward_weight"}) {
    r.op(op, Device::cpu).set_default("im2col");
  }
  // The kernel lab's fused pairs (docs/PERFORMANCE.md, "Fused vs unfused (CPU)"): the fused
  // variant is the faster of each pair, and equal in value to its unfused partner.
  r.op("softmax", Device::cpu).set_default("online");  // 2.1x Eigen's, 14x naive
  r.op("log_softmax", Device::cpu).set_default("online");
  r.op("layer_norm", Device::cpu).set_default("one_pass");
  r.op("cross_entropy", Device::cpu).set_default("fused");
  for (const char* op : {"sgd_update", "adam_update"}) r.op(op, Device::cpu).set_default("fused");
  // Attention and linear+GELU (docs/PERFORMANCE.md, "Attention and linear+GELU (CPU)"): flash
  // is 9x naive and needs O(L) scratch instead of O(L^2); fused linear_gelu is 2.1x unfused at
  // 2 threads (its GELU runs on every thread) and 4 % slower at 1, with the same memory.
  for (const char* op : {"attention", "attention_backward"}) {
    r.op(op, Device::cpu).set_default("flash");
  }
  r.op("linear_gelu", Device::cpu).set_default("fused");
}

}  // namespace prism::kernels
