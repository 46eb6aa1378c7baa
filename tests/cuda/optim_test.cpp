// sgd_update_ and adam_update_ on the GPU against the CPU kernels: every CUDA variant (fused,
// per_tensor), every mode (momentum, Nesterov, weight decay; Adam with L2 decay and AdamW),
// several steps in a row, sizes 1, a prime and one past a block.
//
// Tolerance: none. The CPU kernels are compiled without FMA contraction and the GPU kernels
// round every operation on its own with __fmul_rn, __fadd_rn, ... (kernels/ops/optim/optim.cu), in
// the same order; IEEE arithmetic, division and square root included, is then the same on both
// devices, so parameters and state must agree bit for bit after every step.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tensor/ops.h"
#include "tensor/optim_ops.h"
#include "tensor/random.h"
#include "tests/cuda/cuda_compare.h"
#include "tests/test_util.h"

namespace prism {
namespace {

using cuda_test::differs;
using cuda_test::gpu;
using cuda_test::kFloatTypes;

const int64_t kSizes[] = {1, 1031, 257 * 256 + 1};
constexpr int kSteps = 4;

TEST_CASE("cuda sgd_update_ matches the cpu bit for bit in every mode") {
  manual_seed(61);
  const SgdHyper modes[] = {
      {0.1, 0, 0, false},      // plain
      {0.1, 0.9, 0, false},    // momentum
      {0.1, 0.9, 0, true},     // Nesterov
      {0.05, 0, 0.01, false},  // weight decay
      {0.05, 0.9, 0.01, true},
  };
  cuda_test::for_each_cuda_variant("sgd_update", [&](const std::string& variant) {
    for (DType dt : kFloatTypes) {
      for (int64_t n : kSizes) {
        for (const SgdHyper& h : modes) {
          INFO(prism::testing::info_text("sgd_update [", variant, "] ", dtype_name(dt), " n ", n,
                                         " momentum ", h.momentum, " nesterov ", h.nesterov, " wd ",
                                         h.weight_decay));
          Tensor p = randn({n}, dt), v = zeros({n}, dt);
          Tensor pg = gpu(p), vg = gpu(v);
          for (int s = 0; s < kSteps; ++s) {
            Tensor g = randn({n}, dt);
            {
              kernels::Use cpu_fused("sgd_update", "fused");
              sgd_update_(p, g, v, h);
            }
            sgd_update_(pg, gpu(g), vg, h);
          }
          CHECK(differs(p, pg) == "");
          if (h.momentum != 0) CHECK(differs(v, vg) == "");
        }
      }
    }
  });
}

TEST_CASE("cuda adam_update_ matches the cpu bit for bit, Adam and AdamW") {
  manual_seed(62);
  struct Mode {
    double weight_decay;
    bool decoupled;
  };
  const Mode modes[] = {{0, false}, {0.01, false}, {0.01, true}};
  cuda_test::for_each_cuda_variant("adam_update", [&](const std::string& variant) {
    for (DType dt : kFloatTypes) {
      for (int64_t n : kSizes) {
        for (const Mode& mode : modes) {
          INFO(prism::testing::info_text("adam_update [", variant, "] ", dtype_name(dt), " n ", n,
                                         " wd ", mode.weight_decay,
                                         (mode.decoupled ? " AdamW" : "")));
          Tensor p = randn({n}, dt), m = zeros({n}, dt), v = zeros({n}, dt);
          Tensor pg = gpu(p), mg = gpu(m), vg = gpu(v);
          AdamHyper h;
          h.lr = 0.01;
          h.weight_decay = mode.weight_decay;
          h.decoupled = mode.decoupled;
          for (int s = 1; s <= kSteps; ++s) {
            h.step = s;
            Tensor g = randn({n}, dt);
            {
              kernels::Use cpu_fused("adam_update", "fused");
              adam_update_(p, g, m, v, h);
            }
            adam_update_(pg, gpu(g), mg, vg, h);
          }
          CHECK(differs(p, pg) == "");
          CHECK(differs(m, mg) == "");
          CHECK(differs(v, vg) == "");
        }
      }
    }
  });
}

}  // namespace
}  // namespace prism
