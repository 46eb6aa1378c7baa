// matmul_int8's drivers for the variants test (tests/ops/drivers.h; compiled into the kernels
// test suite only): matmul_int8 (the float32 slot: the output's type).
#include "tests/ops/drivers.h"
#include "tensor/ops.h"
#include "tensor/quantized_ops.h"

namespace prism::kernels {
namespace {

const DriverFile kDrivers([](DriverTable& d) {
  // int8 GEMM (float32 slot: the output's type): int8 operands from quantized random floats, a
  // read transposed when strided; the int32 sums are exact, so the variants agree bit for bit.
  d["matmul_int8"] = {
      {[](DType, ref::Rng& rng, bool strided) {
         const float s = 1.f / 127;
         Tensor a = strided ? quantize(input({131, 67}, false, DType::f32, rng), s).t()
                            : quantize(input({67, 131}, false, DType::f32, rng), s);
         return std::vector<Tensor>{a, quantize(input({61, 131}, false, DType::f32, rng), s),
                                    input({61}, false, DType::f32, rng, 1e-3, 1e-2),
                                    input({61}, false, DType::f32, rng)};
       },
       [](const std::vector<Tensor>& in) {
         return matmul_int8(in[0], 0.02f, in[1], in[2], in[3]);
       }},
  };
});

}  // namespace
}  // namespace prism::kernels
