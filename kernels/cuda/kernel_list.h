// Every built-in CUDA kernel file registers its variants through one of these functions;
// register_cuda_kernels (kernels/cuda/builtin_cuda.cpp) calls them all and sets the defaults.
// Registering touches no GPU: kernels only run when a CUDA tensor reaches them.
#pragma once

#include "kernels/args.h"
#include "kernels/registry.h"

namespace prism::kernels::cuda {

void register_cuda_kernels(Registry& r);  // all of the below, then each op's default

void register_elementwise(Registry& r);  // unary, binary (broadcasting), their backward
void register_copy(Registry& r);         // strided copy (contiguous(), concat, views)
void register_reduce(Registry& r);       // sum, mean, max, argmax
void register_softmax(Registry& r);      // naive (three passes) and online; backward
void register_layer_norm(Registry& r);
void register_rms_norm(Registry& r);  // naive and fused, forward and backward
void register_swiglu(Registry& r);    // naive and fused, forward and backward
void register_cross_entropy(Registry& r);
void register_index(Registry& r);  // gather, index_select and their backward
void register_optim(Registry& r);  // sgd, adam
void register_matmul_naive(Registry& r);
void register_matmul_tiled(Registry& r);
void register_matmul_optimized(Registry& r);
void register_matmul_cublas(Registry& r);
void register_conv(Registry& r);        // im2col + matmul, forward and backward
void register_conv_naive(Registry& r);  // one thread per output element, the three ops
void register_pool(Registry& r);
void register_attention(Registry& r);  // naive and flash, forward and backward
void register_linear_gelu(Registry& r);

}  // namespace prism::kernels::cuda
