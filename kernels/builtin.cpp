// Every built-in CPU kernel (each file registers itself: kernels/kernel_files.h), then each op's
// default variant. The CUDA kernels are registered when the CUDA backend library is loaded, on
// first GPU use (kernels/gpu_loader.cpp, kernels/cuda/builtin_cuda.cpp), so that a CPU run never
// maps cudart or cuBLAS.
//
// Defaults are the fastest correct variant we have measured (docs/PERFORMANCE.md). Eigen's
// reference is still the fastest max/argmax we have.
#include "kernels/cpu/kernel_list.h"
#include "kernels/elementwise_ops.h"

namespace prism::kernels {

void register_builtin_kernels(Registry& r) {
  cpu_kernel_files().register_all(r);

  for (const char* op : {"max", "argmax"}) r.op(op, Device::cpu).set_default("reference");
    // Elementwise: SIMD with vectorised exp/tanh and fixed chunks over the threads
    // (elementwise_optimized.cpp; docs/PERFORMANCE.md, "Threads").
#define PRISM_OPTIMIZED_DEFAULT(Functor, name) r.op(name, Device::cpu).set_default("optimized");
  PRISM_UNARY_OPS(PRISM_OPTIMIZED_DEFAULT)
  PRISM_BINARY_OPS(PRISM_OPTIMIZED_DEFAULT)
#undef PRISM_OPTIMIZED_DEFAULT
  // Index ops and copy: the naive loops split over the threads (index.cpp, copy.cpp).
  for (const char* op : {"gather", "scatter_add", "index_select", "index_add", "copy"}) {
    r.op(op, Device::cpu).set_default("optimized");
  }
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
  // Pooling: the optimized variants run chunks of planes on every thread (pool_optimized.cpp).
  for (const char* op :
       {"max_pool2d", "max_pool2d_backward", "avg_pool2d", "avg_pool2d_backward"}) {
    r.op(op, Device::cpu).set_default("optimized");
  }
  for (const char* op : {"conv2d", "conv2d_backward_input", "conv2d_backward_weight"}) {
    r.op(op, Device::cpu).set_default("im2col");
  }
  // The kernel lab's fused pairs (docs/PERFORMANCE.md, "Fused vs unfused (CPU)"): the fused
  // variant is the faster of each pair, and equal in value to its unfused partner.
  r.op("softmax", Device::cpu).set_default("online");  // 2.1x Eigen's, 14x naive
  r.op("log_softmax", Device::cpu).set_default("online");
  r.op("layer_norm", Device::cpu).set_default("one_pass");
  // rms_norm, swiglu (docs/PERFORMANCE.md, "RMSNorm and SwiGLU (CPU)"): fused 2.9x naive forward
  // and 16-31x backward for rms_norm; 1.02-1.23x and 2.1x for swiglu, whose exp dominates.
  for (const char* op : {"rms_norm", "rms_norm_backward", "swiglu", "swiglu_backward"}) {
    r.op(op, Device::cpu).set_default("fused");
  }
  r.op("cross_entropy", Device::cpu).set_default("fused");
  for (const char* op : {"sgd_update", "adam_update"}) r.op(op, Device::cpu).set_default("fused");
  // Attention and linear+GELU (docs/PERFORMANCE.md, "Attention and linear+GELU (CPU)"): flash
  // is 9x naive and needs O(L) scratch instead of O(L^2); fused linear_gelu is 2.1x unfused at
  // 2 threads (its GELU runs on every thread) and 4 % slower at 1, with the same memory.
  for (const char* op : {"attention", "attention_backward"}) {
    r.op(op, Device::cpu).set_default("flash");
  }
  r.op("linear_gelu", Device::cpu).set_default("fused");
  // ReLU-then-Linear (docs/PERFORMANCE.md, "Threads"): fused takes the MLP's bias adds, ReLUs and
  // ReLU gradients off the 2-thread step, where they ran serially on data both cores wrote.
  r.op("linear", Device::cpu).set_default("fused");
}

}  // namespace prism::kernels
