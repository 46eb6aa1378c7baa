// The list of every built-in kernel, and each op's default variant.
//
// Defaults are the fastest correct variant we have measured (docs/PERFORMANCE.md); until the
// kernel lab adds optimized kernels, Eigen's reference is the fastest matmul, reduction and
// softmax we have, and the naive loops are the only elementwise, copy and index kernels.
#include "kernels/cpu/kernel_list.h"

namespace prism::kernels {

void register_builtin_kernels(Registry& r) {
  cpu::register_elementwise_naive(r);
  cpu::register_copy(r);
  cpu::register_reduce_naive(r);
  cpu::register_reduce_eigen(r);
  cpu::register_matmul_naive(r);
  cpu::register_matmul_eigen(r);
  cpu::register_softmax_naive(r);
  cpu::register_softmax_eigen(r);
  cpu::register_index(r);
  cpu::register_conv_naive(r);
  cpu::register_conv_im2col(r);
  cpu::register_pool_naive(r);
  cpu::register_optim_naive(r);

  for (const char* op : {"matmul", "sum", "mean", "max", "argmax", "softmax", "log_softmax"}) {
    r.op(op, Device::cpu).set_default("reference");
  }
  // conv2d: im2col + Eigen GEMM is ~30x the direct loops (kernels/cpu/conv_im2col.cpp).
  for (const char* op : {"conv2d", "conv2d_backward_input", "conv2d_backward_weight"}) {
    r.op(op, Device::cpu).set_default("im2col");
  }
}

}  // namespace prism::kernels
