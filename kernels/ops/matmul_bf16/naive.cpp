// matmul_bf16, naive and reference variants: C = A @ B with bfloat16 A and B, float32 C.
//
// Idea (naive): the textbook triple loop with each element widened to float32 on the way in.
// Widening is exact (a bfloat16 is the top half of a float32), and so is the product of two
// widened values (8 x 8 significant bits need at most 16 of float32's 24), so the one rounding
// in the whole op is the float32 sum, exactly as in matmul's naive loop: bf16 changes what is
// read (2 bytes an element instead of 4), not how the sum is formed. This is the lesson's
// starting point, and what mixed precision means: narrow storage, wide accumulation.
//
// Idea (reference): the same loop accumulating in float64 and rounding once at the end. Every
// product is exact and the float64 sum of k <= 2^29 of them errs by less than k 2^-53 of the sum
// of magnitudes, far below one float32 ulp: it is the float64 yardstick the lab and the variants
// test compare the other variants with (opinfo/matmul_bf16.cpp states the tolerance).
//
// Cost: 2 m n k FLOPs per batch; bytes = 2 (A + B) + 4 C. Both run at a few GFLOP/s at most,
// slower as n grows (B walked down a column: a new cache line every step; measured:
// docs/PERFORMANCE.md, "bf16 mixed precision").
#include "kernels/cpu/kernel_list.h"
#include "kernels/ops/matmul_bf16/args.h"

namespace prism::kernels::cpu {
namespace {

template <class Acc>
void matmul_bf16_loop(const MatmulBf16Args<float>& a) {
  for (int64_t b = 0; b < a.batch; ++b) {
    const BFloat16* A = a.a + b * a.a_bs;
    const BFloat16* B = a.b + b * a.b_bs;
    float* C = a.c + b * a.m * a.n;
    for (int64_t i = 0; i < a.m; ++i) {
      for (int64_t j = 0; j < a.n; ++j) {
        Acc acc = 0;
        for (int64_t p = 0; p < a.k; ++p) {
          acc += static_cast<Acc>(to_float(A[i * a.a_rs + p * a.a_cs])) *
                 static_cast<Acc>(to_float(B[p * a.b_rs + j * a.b_cs]));
        }
        C[i * a.n + j] = static_cast<float>(acc);
      }
    }
  }
}

void matmul_bf16_naive(const MatmulBf16Args<float>& a) {
  matmul_bf16_loop<float>(a);
}
void matmul_bf16_reference(const MatmulBf16Args<float>& a) {
  matmul_bf16_loop<double>(a);
}

}  // namespace

void register_matmul_bf16_naive(Registry& r) {
  auto& op = r.op("matmul_bf16", Device::cpu);
  op.add<MatmulBf16Args>("naive", VariantTag::naive,
                         "ijk triple loop, bf16 widened to float32, float32 sum",
                         &matmul_bf16_naive);
  op.add<MatmulBf16Args>("reference", VariantTag::reference,
                         "ijk triple loop summing in float64: the yardstick",
                         &matmul_bf16_reference);
}
PRISM_CPU_KERNELS(61, register_matmul_bf16_naive);

}  // namespace prism::kernels::cpu
