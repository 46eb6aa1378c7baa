// attention: every variant against the unfused chain of existing ops (matmul, a scale, an
// additive -inf mask, softmax, matmul) in float64, on odd shapes (one token, a prime length that
// is no multiple of the 128-row tiles, Lq != Lk, head sizes 1, 3 and 80), causal and not, strided
// head views; gradients by gradcheck and against the chain's; errors; the meta device; the cost
// formula and the profile's memory figures.
#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/ops/attention/op.h"
#include "kernels/registry.h"
#include "profiler/session.h"
#include "tensor/ops.h"
#include "tensor/random.h"
#include "tests/test_util.h"

namespace prism {
namespace {

using profiler::Cost;
using testing::contains;
using testing::error_of;
using testing::max_abs_diff;

const char* const kVariants[] = {"naive", "flash"};

// The additive causal mask [lq, lk]: -inf where j > i.
Tensor causal_mask(int64_t lq, int64_t lk, DType dt) {
  std::vector<double> m(static_cast<size_t>(lq * lk), 0.0);
  for (int64_t i = 0; i < lq; ++i) {
    for (int64_t j = i + 1; j < lk; ++j)
      m[static_cast<size_t>(i * lk + j)] = -std::numeric_limits<double>::infinity();
  }
  return from_vector(m, {lq, lk}).to(dt);
}

// The composed reference, built from existing ops only.
Tensor scores(const Tensor& q, const Tensor& k, bool causal, double scale) {
  Tensor s =
      matmul(q, k.transpose(-1, -2)) * (scale == 0 ? 1 / std::sqrt(double(q.size(-1))) : scale);
  return causal ? s + causal_mask(q.size(-2), k.size(-2), q.dtype()) : s;
}
Tensor chain(const Tensor& q, const Tensor& k, const Tensor& v, bool causal, double scale = 0) {
  return matmul(softmax(scores(q, k, causal, scale), -1), v);
}

struct Case {
  int64_t b, h, lq, lk, d;
  bool causal;
};

// Odd shapes: one token, a prime length, Lq != Lk, head sizes 1, 3 and 80, several tiles.
const std::vector<Case> kCases = {
    {1, 1, 1, 1, 4, false},    {1, 1, 1, 1, 4, true},    {2, 3, 37, 37, 3, true},
    {2, 3, 37, 37, 3, false},  {1, 2, 5, 70, 8, false},  {1, 2, 70, 5, 8, false},
    {1, 2, 130, 130, 1, true}, {1, 1, 67, 67, 80, true}, {2, 1, 67, 131, 80, false},
};

TEST_CASE("attention: every variant equals the matmul-softmax-matmul chain in float64") {
  for (const Case& c : kCases) {
    manual_seed(1);
    Tensor q = randn({c.b, c.h, c.lq, c.d}, DType::f64);
    Tensor k = randn({c.b, c.h, c.lk, c.d}, DType::f64);
    Tensor v = randn({c.b, c.h, c.lk, c.d}, DType::f64);
    const Tensor want = chain(q, k, v, c.causal);
    // lse_i = log sum_j exp(S_ij) over visible keys (exp(-inf) = 0 drops the masked ones).
    const Tensor want_lse = log(sum(exp(scores(q, k, c.causal, 0)), {-1}));
    for (const char* variant : kVariants) {
      INFO(variant << " B" << c.b << " H" << c.h << " Lq" << c.lq << " Lk" << c.lk << " d" << c.d
                   << (c.causal ? " causal" : ""));
      kernels::Use use("attention", variant);
      AttentionResult r = attention_with_lse(q, k, v, c.causal);
      CHECK(r.out.shape() == Dims{c.b, c.h, c.lq, c.d});
      CHECK(r.lse.shape() == Dims{c.b, c.h, c.lq});
      CHECK(max_abs_diff(r.out, want) < 1e-12);
      CHECK(max_abs_diff(r.lse, want_lse) < 1e-12);
    }
  }
}

TEST_CASE("attention: float32 variants agree with the float64 chain") {
  manual_seed(2);
  Tensor q = randn({1, 2, 131, 64}, DType::f64), k = randn({1, 2, 131, 64}, DType::f64);
  Tensor v = randn({1, 2, 131, 64}, DType::f64);
  for (bool causal : {false, true}) {
    const Tensor want = chain(q, k, v, causal);
    for (const char* variant : kVariants) {
      INFO(variant << (causal ? " causal" : ""));
      kernels::Use use("attention", variant);
      Tensor got = attention(q.to(DType::f32), k.to(DType::f32), v.to(DType::f32), causal);
      CHECK(got.dtype() == DType::f32);
      CHECK(max_abs_diff(got, want) < 2e-5);
    }
  }
}

TEST_CASE("attention: a given scale, and 3-D [BH, L, d] inputs") {
  manual_seed(3);
  Tensor q = randn({4, 9, 5}, DType::f64), k = randn({4, 11, 5}, DType::f64);
  Tensor v = randn({4, 11, 5}, DType::f64);
  for (const char* variant : kVariants) {
    kernels::Use use("attention", variant);
    AttentionResult r = attention_with_lse(q, k, v, false, 0.3);
    CHECK(r.out.shape() == Dims{4, 9, 5});
    CHECK(r.lse.shape() == Dims{4, 9});
    CHECK(max_abs_diff(r.out, chain(q, k, v, false, 0.3)) < 1e-12);
  }
}

TEST_CASE("attention: strided head views are read in place, no copy") {
  // The layout MultiHeadAttention makes: qkv [B, T, 3, H, d] permuted to [3, B, H, T, d].
  manual_seed(4);
  const int64_t b = 2, t = 41, h = 3, d = 7;
  Tensor qkv = randn({b, t, 3, h, d}, DType::f64);
  Tensor parts = qkv.permute({2, 0, 3, 1, 4});
  Tensor q = parts.select(0, 0), k = parts.select(0, 1), v = parts.select(0, 2);
  REQUIRE_FALSE(q.is_contiguous());
  // And a head size dim that is not the innermost in memory (column stride != 1).
  Tensor kt = randn({b, h, d, t}, DType::f64).transpose(2, 3);
  for (const char* variant : kVariants) {
    for (bool causal : {false, true}) {
      INFO(variant << (causal ? " causal" : ""));
      kernels::Use use("attention", variant);
      profiler::Session session;
      Tensor got = attention(q, k, v, causal);
      const profiler::Profile& p = session.stop();
      for (const auto& r : p.recording.records) CHECK(std::string(r.op) != "contiguous");
      CHECK(max_abs_diff(got, chain(q.contiguous(), k.contiguous(), v.contiguous(), causal)) <
            1e-12);
      CHECK(max_abs_diff(attention(q, kt, v, causal), chain(q, kt.contiguous(), v, causal)) <
            1e-12);
    }
  }
}

TEST_CASE("attention: gradcheck in float64, every variant, causal and not") {
  struct Small {
    int64_t lq, lk, d;
    bool causal;
  };
  for (const Small& s :
       {Small{3, 3, 2, true}, Small{3, 5, 2, false}, Small{4, 2, 3, false}, Small{1, 1, 1, true}}) {
    for (const char* variant : kVariants) {
      INFO(variant << " Lq" << s.lq << " Lk" << s.lk << " d" << s.d << (s.causal ? " causal" : ""));
      kernels::Use fwd("attention", variant);
      kernels::Use bwd("attention_backward", variant);
      manual_seed(5);
      Tensor q = randn({2, 2, s.lq, s.d}, DType::f64).set_requires_grad();
      Tensor k = randn({2, 2, s.lk, s.d}, DType::f64).set_requires_grad();
      Tensor v = randn({2, 2, s.lk, s.d}, DType::f64).set_requires_grad();
      const bool causal = s.causal;
      CHECK_GRAD(
          [causal](const std::vector<Tensor>& in) {
            return attention(in[0], in[1], in[2], causal);
          },
          q, k, v);
    }
  }
}

TEST_CASE("attention: gradients equal the chain's on tiles with ragged edges") {
  for (const Case& c : {Case{1, 2, 131, 131, 80, true}, Case{2, 1, 67, 131, 5, false},
                        Case{1, 1, 1, 37, 3, false}}) {
    manual_seed(6);
    Tensor q = randn({c.b, c.h, c.lq, c.d}, DType::f64).set_requires_grad();
    Tensor k = randn({c.b, c.h, c.lk, c.d}, DType::f64).set_requires_grad();
    Tensor v = randn({c.b, c.h, c.lk, c.d}, DType::f64).set_requires_grad();
    Tensor g = randn({c.b, c.h, c.lq, c.d}, DType::f64);
    chain(q, k, v, c.causal).backward(g);
    const Tensor dq = q.grad(), dk = k.grad(), dv = v.grad();
    for (const char* variant : kVariants) {
      INFO(variant << " Lq" << c.lq << " Lk" << c.lk << " d" << c.d);
      kernels::Use fwd("attention", variant);
      kernels::Use bwd("attention_backward", variant);
      for (const Tensor* t : {&q, &k, &v}) t->zero_grad();
      // Through a non-contiguous output gradient too (the front end copies it).
      attention(q, k, v, c.causal).backward(g.transpose(0, 1).contiguous().transpose(0, 1));
      CHECK(max_abs_diff(q.grad(), dq) < 1e-11);
      CHECK(max_abs_diff(k.grad(), dk) < 1e-11);
      CHECK(max_abs_diff(v.grad(), dv) < 1e-11);
    }
  }
}

TEST_CASE("attention: a clear error for every bad input") {
  Tensor q = zeros({2, 3, 5, 4}), k = zeros({2, 3, 6, 4}), v = zeros({2, 3, 6, 4});
  CHECK(contains(error_of([&] {
                   attention(q, k, zeros({2, 3, 6, 5}), false);
                 }),
                 "same head size d"));
  CHECK(contains(error_of([&] {
                   attention(q, k, zeros({2, 3, 7, 4}), false);
                 }),
                 "same number of keys"));
  CHECK(contains(error_of([&] {
                   attention(q, zeros({2, 2, 6, 4}), v, false);
                 }),
                 "batch and head dims must match"));
  CHECK(contains(error_of([&] { attention(q, k, v, true); }),
                 "causal attention needs as many queries as keys (Lq == Lk), got q [2,3,5,4], "
                 "k [2,3,6,4]"));
  CHECK(contains(error_of([&] { attention(q, k.to(DType::f64), v, false); }), "dtypes differ"));
  CHECK(contains(error_of([&] {
                   attention(zeros({5, 4}), zeros({6, 4}), zeros({6, 4}), false);
                 }),
                 "must all be 4-D [B, H, L, d] or all 3-D"));
  CHECK(contains(error_of([&] {
                   attention(q, zeros({3, 6, 4}), zeros({3, 6, 4}), false);
                 }),
                 "must all be 4-D"));
  CHECK(contains(
      error_of([&] {
        attention(q, zeros({2, 3, 6, 4}, DType::i64), zeros({2, 3, 6, 4}, DType::i64), false);
      }),
      "needs a float32 or float64"));
  CHECK(contains(error_of([&] {
                   attention(q, zeros({2, 3, 0, 4}), zeros({2, 3, 0, 4}), false);
                 }),
                 "at least one key"));
  CHECK(contains(error_of([&] { attention(q, k, v, false, std::nan("")); }), "scale"));
}

TEST_CASE("attention: no queries give an empty output and zero key gradients") {
  Tensor q = zeros({1, 2, 0, 4}, DType::f64).set_requires_grad();
  Tensor k = ones({1, 2, 3, 4}, DType::f64).set_requires_grad();
  Tensor v = ones({1, 2, 3, 4}, DType::f64).set_requires_grad();
  for (const char* variant : kVariants) {
    kernels::Use fwd("attention", variant);
    Tensor out = attention(q, k, v, false);
    CHECK(out.shape() == Dims{1, 2, 0, 4});
    out.backward(zeros({1, 2, 0, 4}, DType::f64));
    CHECK(max_abs_diff(k.grad(), zeros({1, 2, 3, 4}, DType::f64)) == 0);
    k.zero_grad();
    v.zero_grad();
  }
}

TEST_CASE("attention: cost formula, forward and backward") {
  // B 2, H 3, Lq 5, Lk 7, d 4: 210 pairs, each 2 d = 8 MACs in the two products.
  CHECK(costs::attention_pairs({2, 3, 5, 4}, {2, 3, 7, 4}, false) == 210);
  CHECK(costs::attention({2, 3, 5, 4}, {2, 3, 7, 4}, false, 4) ==
        Cost{210 * (16 + 5), 210 * 8, (2 * 120 + 2 * 168 + 30) * 4});
  // Causal L = 5: 15 of the 25 pairs per head are visible (j <= i), 90 for 6 heads.
  CHECK(costs::attention_pairs({2, 3, 5, 4}, {2, 3, 5, 4}, true) == 90);
  CHECK(costs::attention({2, 3, 5, 4}, {2, 3, 5, 4}, true, 8) ==
        Cost{90 * 21, 90 * 8, (4 * 120 + 30) * 8});
  // Backward: 5 d MACs per pair + d per query row; 5 more FLOPs per pair.
  CHECK(costs::attention_backward({2, 3, 5, 4}, {2, 3, 7, 4}, false, 4) ==
        Cost{2 * (210 * 20 + 30 * 4) + 5 * 210, 210 * 20 + 30 * 4, (4 * 120 + 4 * 168 + 30) * 4});
  // The size: B 1, H 8, L 1024, d 64 is 2.19 GFLOP forward, about half when causal.
  const Cost full = costs::attention({1, 8, 1024, 64}, {1, 8, 1024, 64}, false, 4);
  const Cost causal = costs::attention({1, 8, 1024, 64}, {1, 8, 1024, 64}, true, 4);
  CHECK(full.flops == int64_t{8} * 1024 * 1024 * 261);
  CHECK(causal.flops * 2 == int64_t{8} * 1024 * 1025 * 261);

  // The profile records exactly the formula, forward and backward.
  Tensor q = randn({2, 3, 5, 4}).set_requires_grad(), k = randn({2, 3, 7, 4});
  Tensor v = randn({2, 3, 7, 4});
  profiler::Session session;
  sum(attention(q, k, v, false)).backward();
  const profiler::Profile& p = session.stop();
  int seen = 0;
  for (const auto& r : p.recording.records) {
    if (std::string(r.op) == "attention") {
      CHECK(r.cost == costs::attention({2, 3, 5, 4}, {2, 3, 7, 4}, false, 4));
      ++seen;
    }
    if (std::string(r.op) == "attention_backward") {
      CHECK(r.cost == costs::attention_backward({2, 3, 5, 4}, {2, 3, 7, 4}, false, 4));
      CHECK(std::string(r.grad_of) == "attention.dqkv");
      ++seen;
    }
  }
  CHECK(seen == 2);
}

// Bytes the attention record allocated: out + lse + the variant's scratch.
int64_t forward_alloc_bytes(const char* variant, int64_t l, Device dev) {
  DefaultDevice on(dev);
  Tensor q = randn({1, 2, l, 16}), k = randn({1, 2, l, 16}), v = randn({1, 2, l, 16});
  kernels::Use use("attention", variant);
  profiler::Session session;
  attention(q, k, v, true);
  const profiler::Profile& p = session.stop();
  for (const auto& r : p.recording.records) {
    if (std::string(r.op) == "attention") return r.alloc_bytes;
  }
  return -1;
}

TEST_CASE("attention: the profile shows naive's L^2 scratch and flash's linear one") {
  const int64_t l = 100, out_and_lse = (2 * l * 16 + 2 * l) * 4;
  // naive: the 100 x 100 scores of both heads.
  CHECK(forward_alloc_bytes("naive", l, Device::cpu) == out_and_lse + 2 * l * l * 4);
  // flash: tiles per thread, independent of L but for one value per query row.
  const int64_t tiles = kernels::attention_tiled_workspace(l, 16, omp_get_max_threads()) * 4;
  CHECK(forward_alloc_bytes("flash", l, Device::cpu) == out_and_lse + tiles);
  // The meta device reports the same figures without running anything.
  CHECK(forward_alloc_bytes("naive", l, Device::meta) == out_and_lse + 2 * l * l * 4);
  CHECK(forward_alloc_bytes("flash", l, Device::meta) == out_and_lse + tiles);
}

TEST_CASE("attention: the meta device gives shapes and gradients' shapes") {
  DefaultDevice meta(Device::meta);
  Tensor q = randn({2, 4, 9, 8}).set_requires_grad();
  Tensor k = randn({2, 4, 9, 8}).set_requires_grad();
  Tensor v = randn({2, 4, 9, 8}).set_requires_grad();
  for (const char* variant : kVariants) {
    kernels::Use fwd("attention", variant);
    kernels::Use bwd("attention_backward", variant);
    AttentionResult r = attention_with_lse(q, k, v, true);
    CHECK(r.out.device() == Device::meta);
    CHECK(r.out.shape() == Dims{2, 4, 9, 8});
    CHECK(r.lse.shape() == Dims{2, 4, 9});
    sum(r.out).backward();
    CHECK(q.grad().shape() == Dims{2, 4, 9, 8});
    CHECK(v.grad().device() == Device::meta);
    for (const Tensor* t : {&q, &k, &v}) t->zero_grad();
  }
  CHECK_THROWS_AS(attention(q, randn({2, 4, 9, 7}), v, false), Error);
}

}  // namespace
}  // namespace prism
