// Every built-in CPU kernel file registers its variants through one of these functions;
// kernels/builtin.cpp calls them all, in this order, when the registry is first used.
#pragma once

#include "kernels/args.h"
#include "kernels/registry.h"

namespace prism::kernels::cpu {

void register_elementwise_naive(Registry& r);
void register_copy(Registry& r);
void register_reduce_naive(Registry& r);
void register_reduce_eigen(Registry& r);
void register_reduce_optimized(Registry& r);
void register_matmul_naive(Registry& r);
void register_matmul_eigen(Registry& r);
void register_matmul_reordered(Registry& r);
void register_matmul_blocked(Registry& r);
void register_matmul_optimized(Registry& r);
void register_softmax_naive(Registry& r);
void register_softmax_eigen(Registry& r);
void register_softmax_online(Registry& r);
void register_layer_norm(Registry& r);
void register_rms_norm(Registry& r);
void register_swiglu(Registry& r);
void register_cross_entropy(Registry& r);
void register_index(Registry& r);
void register_conv_naive(Registry& r);
void register_conv_im2col(Registry& r);
void register_pool_naive(Registry& r);
void register_pool_optimized(Registry& r);
void register_optim_fused(Registry& r);
void register_optim_per_tensor(Registry& r);
void register_attention_naive(Registry& r);
void register_attention_flash(Registry& r);
void register_linear_gelu_unfused(Registry& r);
void register_linear_gelu_fused(Registry& r);

}  // namespace prism::kernels::cpu
