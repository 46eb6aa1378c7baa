// matmul_int8, naive variant: the textbook loops over int8 operands with an int32 accumulator.
//
// Idea: out[i][j] = (sum_p a[i][p] w[j][p]) * a_scale * w_scale[j] + bias[j]. Each product of
// two int8 values fits in 15 bits, and the int32 sum is exact for any k below 133,000, so this
// loop is the integer reference every other variant must match bit for bit; the float
// requantization is shared with them (epilogue.h).
// Cost: m n k MACs (2 m n k integer ops); bytes = a + w (1 each) + out (4) + scales and bias (4).
// Speed: a scalar loop with strided reads, far below the VNNI kernel (`prism lab matmul_int8`;
// measured: docs/PERFORMANCE.md, "int8 post-training quantization").
#include "kernels/cpu/kernel_list.h"
#include "kernels/ops/matmul_int8/epilogue.h"
#include "kernels/ops/matmul_int8/args.h"

namespace prism::kernels::cpu {
namespace {

void matmul_int8_naive(const MatmulInt8Args<float>& a) {
  for (int64_t i = 0; i < a.m; ++i) {
    for (int64_t j = 0; j < a.n; ++j) {
      int32_t acc = 0;
      for (int64_t p = 0; p < a.k; ++p) {
        acc += static_cast<int32_t>(a.a[i * a.a_rs + p * a.a_cs]) *
               static_cast<int32_t>(a.w[j * a.w_rs + p * a.w_cs]);
      }
      requantize_row(a, i, j, j + 1, &acc);
    }
  }
}

}  // namespace

void register_matmul_int8_naive(Registry& r) {
  r.op("matmul_int8", Device::cpu)
      .add<MatmulInt8Args>("naive", VariantTag::naive,
                           "ijk loops, int32 accumulator, requantized per element",
                           &matmul_int8_naive);
}
PRISM_CPU_KERNELS(63, register_matmul_int8_naive);

}  // namespace prism::kernels::cpu
