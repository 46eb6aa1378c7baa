// matmul_bf16's drivers for the variants test (tests/ops/drivers.h; compiled into the kernels
// test suite only): matmul_bf16 (the float32 slot: the accumulator's and output's type).
#include "tests/ops/drivers.h"
#include "tensor/autocast.h"
#include "tensor/ops.h"

namespace prism::kernels {
namespace {

const DriverFile kDrivers([](DriverTable& d) {
  // bf16 GEMM (float32 slot: the accumulator's and output's type): bf16 operands rounded from
  // random floats, b read transposed when strided; a batch over a shared b, odd sizes.
  d["matmul_bf16"] = {
      {[](DType, ref::Rng& rng, bool strided) {
         Tensor a = cast(input({3, 37, 131}, false, DType::f32, rng), DType::bf16);
         Tensor b = strided ? cast(input({61, 131}, false, DType::f32, rng), DType::bf16).t()
                            : cast(input({131, 61}, false, DType::f32, rng), DType::bf16);
         return std::vector<Tensor>{a, b};
       },
       [](const std::vector<Tensor>& in) { return matmul_bf16(in[0], in[1]); }},
  };
});

}  // namespace
}  // namespace prism::kernels
