// What fusion saves in memory, read from the profiler's own records: the same computation as a
// chain of tensor ops and as one fused op, inside a profiler session, and the buffers each
// allocated (count and bytes, summed over top-level op records, which include their nested
// ones).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "kernels/registry.h"
#include "profiler/session.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/ops.h"
#include "tensor/optim_ops.h"

namespace prism {
namespace {

struct Allocs {
  int64_t count = 0, bytes = 0;
};

Allocs allocations(const profiler::Profile& p) {
  Allocs a;
  for (const auto& r : p.recording.records) {
    if (r.kind == profiler::Kind::op && r.depth == 0) a.count += r.allocs, a.bytes += r.alloc_bytes;
  }
  return a;
}

template <class F>
Allocs allocations_of(F&& f) {
  profiler::Session session;
  f();
  return allocations(session.stop());
}

constexpr int64_t kN = 64, kC = 1000;

TEST_CASE("cross_entropy fused makes no [N, C] buffer, the composed chain and variant do") {
  Tensor logits = randn({kN, kC});
  Tensor target = zeros({kN}, DType::i64);
  const int64_t nc_bytes = kN * kC * 4;
  NoGrad no_grad;
  const Allocs fused = allocations_of([&] { cross_entropy(logits, target); });
  CHECK(fused.count == 1);  // the 0-d loss, nothing else
  CHECK(fused.bytes == 4);
  const Allocs composed_variant = allocations_of([&] {
    kernels::Use use("cross_entropy", "composed");
    cross_entropy(logits, target);
  });
  CHECK(composed_variant.count == 2);  // the loss and the [N, C] log-probabilities
  CHECK(composed_variant.bytes == 4 + nc_bytes);
  // What nn did before the op existed: nll_loss(log_softmax(x), t) = -mean(gather(...)).
  const Allocs chain =
      allocations_of([&] { -mean(gather(log_softmax(logits, 1), 1, target.unsqueeze(1))); });
  CHECK(chain.count >= 4);  // log_softmax, gather, mean, neg
  CHECK(chain.bytes >= nc_bytes);
  CHECK(fused.bytes < chain.bytes / 1000);
}

TEST_CASE("cross_entropy in grad mode keeps N float64 lse values, still no [N, C] buffer") {
  Tensor logits = randn({kN, kC}).set_requires_grad();
  Tensor target = zeros({kN}, DType::i64);
  const Allocs fused = allocations_of([&] { cross_entropy(logits, target); });
  CHECK(fused.count == 2);
  CHECK(fused.bytes == 4 + kN * 8);
  const Allocs chain =
      allocations_of([&] { -mean(gather(log_softmax(logits, 1), 1, target.unsqueeze(1))); });
  CHECK(chain.bytes >= kN * kC * 4);
}

TEST_CASE("layer_norm makes its output and two [rows] statistics, the composition ten buffers") {
  const int64_t rows = 32, d = 256;
  Tensor x = randn({rows, d}).set_requires_grad();
  Tensor w = ones({d}).set_requires_grad();
  Tensor b = zeros({d}).set_requires_grad();
  const Allocs fused = allocations_of([&] { layer_norm(x, w, b); });
  CHECK(fused.count == 3);
  CHECK(fused.bytes == (rows * d + 2 * rows) * 4);
  // nn::LayerNorm before the op: mean, sub, mul, mean, (+ eps), sqrt, div, mul, add.
  const Allocs chain = allocations_of([&] {
    Tensor mu = mean(x, {-1}, true);
    Tensor xc = x - mu;
    Tensor var = mean(xc * xc, {-1}, true);
    (xc / prism::sqrt(var + 1e-5)) * w + b;
  });
  CHECK(chain.count >= 9);
  CHECK(chain.bytes >= 5 * rows * d * 4);  // xc, xc * xc, the division, * w, + b
  CHECK(fused.bytes * 4 < chain.bytes);
}

TEST_CASE("adam_update per_tensor allocates a temporary per step, fused allocates nothing") {
  const int64_t n = 1000;
  Tensor p = randn({n}), g = randn({n}), m = zeros({n}), v = zeros({n});
  AdamHyper h;
  const Allocs fused = allocations_of([&] { adam_update_(p, g, m, v, h); });
  CHECK(fused.count == 0);
  CHECK(fused.bytes == 0);
  const Allocs unfused = allocations_of([&] {
    kernels::Use use("adam_update", "per_tensor");
    adam_update_(p, g, m, v, h);
  });
  CHECK(unfused.count == 1);
  CHECK(unfused.bytes == n * 4);  // the denominator sqrt(v) / sqrt(bc2) + eps
  h.weight_decay = 0.01;          // Adam's L2 decay adds the decayed gradient grad + wd p
  const Allocs l2 = allocations_of([&] {
    kernels::Use use("adam_update", "per_tensor");
    adam_update_(p, g, m, v, h);
  });
  CHECK(l2.bytes == 2 * n * 4);
  const Allocs sgd = allocations_of([&] {
    kernels::Use use("sgd_update", "per_tensor");
    SgdHyper s;
    s.momentum = 0.9;
    s.nesterov = true;
    Tensor vel = zeros({n});
    sgd_update_(p, g, vel, s);
  });
  CHECK(sgd.bytes == n * 4 + n * 4);  // the zeros velocity, then the Nesterov step temporary
}

}  // namespace
}  // namespace prism
