// quantize_int8: float32 -> int8, symmetric, q = clamp(round(x / scale), -127, 127).
//
// Idea: one division and one round per element. The round is to nearest with ties to even
// (the default rounding mode, applied by an addition; see kRoundMagic), the same rule as the float
// formats themselves; values past +-127.5 scale saturate to +-127 instead of wrapping, and NaN
// (which calibration never produces from finite data) maps to 0. -128 is never produced: the range
// stays symmetric, so the zero point is 0 and the GEMM needs no offset for the activations.
// Cost: 1 FLOP (the divide) per element; bytes = 4 read + 1 written per element.
// Speed: a loop the compiler vectorizes, split over the threads in elementwise chunks, well
// under a nanosecond per element at 1 thread (`prism lab quantize_int8`; measured:
// docs/PERFORMANCE.md, "int8 post-training quantization").
#include <cmath>

#include "kernels/cpu/kernel_list.h"
#include "kernels/cpu/parallel.h"
#include "kernels/ops/matmul_int8/args.h"

namespace prism::kernels::cpu {
namespace {

// Round half to even without a library call: for |v| <= 127 < 2^22, v + 1.5 * 2^23 lands where
// the float spacing is exactly 1, so the addition itself rounds v to an integer by the current
// (nearest-even) mode, and subtracting the constant back is exact. std::nearbyint gives the
// same values but is a libm call per element unless the compiler may ignore floating-point
// exceptions (measured several times slower: docs/PERFORMANCE.md, "int8 post-training
// quantization").
constexpr float kRoundMagic = 12582912.f;  // 1.5 * 2^23

// One chunk. Plain arguments on purpose: a store through an int8_t pointer may alias anything,
// so values read through a struct or a lambda's captures would be reloaded at every element
// and the loop would not vectorize (measured an order of magnitude slower, same section).
void quantize_chunk(const float* x, int8_t* out, float scale, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i] / scale;
    v = v > 127.f ? 127.f : v;    // saturate first: the same result as after rounding,
    v = v < -127.f ? -127.f : v;  // since 127 and -127 are integers
    v = v == v ? v : 0.f;         // NaN (fails every compare) -> 0
    out[i] = static_cast<int8_t>(static_cast<int32_t>((v + kRoundMagic) - kRoundMagic));
  }
}

void quantize_naive(const QuantizeArgs<float>& a) {
  parallel_for(a.numel, kChunkElementwise,
               [&a](int64_t b, int64_t e) { quantize_chunk(a.x + b, a.out + b, a.scale, e - b); });
}

}  // namespace

void register_quantize(Registry& r) {
  r.op("quantize_int8", Device::cpu)
      .add<QuantizeArgs>("naive", VariantTag::naive,
                         "divide, round half to even, saturate to [-127, 127]", &quantize_naive);
}
PRISM_CPU_KERNELS(227, register_quantize);

}  // namespace prism::kernels::cpu
