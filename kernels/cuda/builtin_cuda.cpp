// The list of every built-in CUDA kernel, and each op's default variant on the GPU. Called by
// the loader (kernels/gpu_loader.cpp) when it opens the backend library, after the CPU kernels.
//
// Defaults follow the CPU rule, "the fastest correct variant", but on the GPU that is a claim
// to be measured on a GPU (docs/PERFORMANCE.md); until then the default is the variant built
// the way fast GPU code is built (cuBLAS for matmul, one-pass online softmax, flash attention).
#include "kernels/cuda/kernel_list.h"

namespace prism::kernels::cuda {

void register_cuda_kernels(Registry& r) {
  // ---- elementwise, reductions, rows, optimizers (kernels/cuda/*.cu) ----
  register_elementwise(r);  // one variant each ("naive"): the default without a choice
  register_copy(r);
  register_reduce(r);
  register_softmax(r);
  register_layer_norm(r);
  register_rms_norm(r);  // fused registered first: the default
  register_swiglu(r);    // fused registered first: the default
  register_cross_entropy(r);
  register_index(r);
  register_optim(r);
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
  // ---- matmul, conv, pooling, attention ----
  register_matmul_naive(r);
  register_matmul_tiled(r);
  register_matmul_optimized(r);
  register_matmul_cublas(r);
  register_conv(r);        // im2col (cuBLAS GEMMs): registered first, so the default
  register_conv_naive(r);  // the baseline it is checked against
  register_pool(r);        // naive: the only variant of each pool op
  register_attention(r);
  register_linear_gelu(r);
  // cuBLAS until a GPU measurement shows "optimized" close enough (issue 5: >= 70 %).
  r.op("matmul", Device::cuda).set_default("reference");
  // O(L) memory and one pass over K and V, where naive writes and reads L^2 scores per head.
  r.op("attention", Device::cuda).set_default("flash");
  r.op("attention_backward", Device::cuda).set_default("flash");
  // The output crosses DRAM once instead of three times (GEMM, then bias + GELU).
  r.op("linear_gelu", Device::cuda).set_default("fused");
}

}  // namespace prism::kernels::cuda
