// Cost formulas of layer_norm and cross_entropy (forward and backward), worked by hand, and the
// costs the profiler records for real calls, which must be exactly the formulas' numbers.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "kernels/ops/cross_entropy/op.h"
#include "kernels/ops/layer_norm/op.h"
#include "profiler/session.h"
#include "tensor/ops.h"

namespace prism {

namespace {

using profiler::Cost;

TEST_CASE("costs::layer_norm: 6 FLOPs per element, +1 weight, +1 bias, 5 per row") {
  // [4, 10] with weight and bias, statistics saved: 8 * 40 + 5 * 4 FLOPs;
  // x and y (80) + weight and bias (20) + mean and rstd (8) elements.
  CHECK(costs::layer_norm(4, 10, true, true, true, 4) == Cost{340, 0, (80 + 20 + 8) * 4});
  CHECK(costs::layer_norm(4, 10, false, false, false, 8) == Cost{260, 0, 80 * 8});
  CHECK(costs::layer_norm(4, 10, true, false, false, 4) == Cost{300, 0, 90 * 4});
  CHECK(costs::layer_norm(0, 10, true, true, true, 4) == Cost{0, 0, 20 * 4});
}

TEST_CASE("costs::layer_norm_backward: 9 for dx (+1 with a weight), 2 dweight, 1 dbias") {
  // [4, 10], everything: (10 + 2 + 1) * 40 FLOPs; reads x, g (80), mean, rstd (8), weight (10);
  // writes dx (40), dweight, dbias (20).
  CHECK(costs::layer_norm_backward(4, 10, true, true, true, true, 4) ==
        Cost{520, 0, (80 + 8 + 10 + 40 + 20) * 4});
  // No weight, dx only.
  CHECK(costs::layer_norm_backward(4, 10, false, true, false, false, 4) ==
        Cost{360, 0, (80 + 8 + 40) * 4});
  // Only dbias (the input needs no gradient).
  CHECK(costs::layer_norm_backward(4, 10, false, false, false, true, 4) ==
        Cost{40, 0, (80 + 8 + 10) * 4});
}

TEST_CASE("costs::cross_entropy: 4 FLOPs per logit, 3 per row, 1 for the reduction") {
  // [8, 100]: 3200 + 24 + 1 FLOPs; logits 800 * 4 + loss 4 + targets 8 * 8 (+ lse 8 * 8).
  CHECK(costs::cross_entropy(8, 100, false, 4) == Cost{3225, 0, 3200 + 4 + 64});
  CHECK(costs::cross_entropy(8, 100, true, 4) == Cost{3225, 0, 3200 + 4 + 64 + 64});
  CHECK(costs::cross_entropy(8, 100, false, 8) == Cost{3225, 0, 6400 + 8 + 64});
  // Backward: 3 per logit + 1 per row; logits and dlogits, targets and lse (8 bytes each).
  CHECK(costs::cross_entropy_backward(8, 100, 4) == Cost{2408, 0, 6400 + 64 + 64});
}

// The cost the profiler recorded for the first record of `op`.
Cost recorded(const profiler::Profile& p, const std::string& op) {
  for (const auto& r : p.recording.records) {
    if (r.kind == profiler::Kind::op && op == r.op) return r.cost;
  }
  FAIL("no record of " << op);
  return {};
}

TEST_CASE("the profiler records the formulas' costs for layer_norm and cross_entropy") {
  Tensor x = randn({6, 9}).set_requires_grad();
  Tensor w = ones({9}).set_requires_grad();
  Tensor t = from_vector(std::vector<int64_t>{0, 1, 2, 3, 4, 5}, {6});
  profiler::Session session;
  Tensor y = layer_norm(x, w, Tensor());
  Tensor loss = cross_entropy(y, t, Reduction::sum);
  loss.backward();
  const profiler::Profile& p = session.stop();
  CHECK(recorded(p, "layer_norm") == costs::layer_norm(6, 9, true, false, true, 4));
  CHECK(recorded(p, "layer_norm_backward") ==
        costs::layer_norm_backward(6, 9, true, true, true, false, 4));
  CHECK(recorded(p, "cross_entropy") == costs::cross_entropy(6, 9, true, 4));
  CHECK(recorded(p, "cross_entropy_backward") == costs::cross_entropy_backward(6, 9, 4));
}

}  // namespace
}  // namespace prism
