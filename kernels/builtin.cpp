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

  for (const char* op : {"matmul", "sum", "mean", "max", "argmax", "softmax", "log_softmax"}) {
    r.op(op, Device::cpu).set_default("reference");
  }
}

}  // namespace prism::kernels
