// attention and attention_backward on the GPU: every CUDA variant against the CPU's naive
// kernels on the same Args, then the front end on CUDA tensors.
//
// Cases: one token; Lq != Lk; lengths that are no multiple of any tile (7, 13, 37, 65, 129,
// 150, 200); causal and not; head sizes 1, 5, 16, 33, 64, 80, 128, 256 (each register width of
// the flash kernels) and 300 (past kFlashMaxHead: the flash variants fall back to the naive
// path); a scale other than 1 / sqrt(d). q, k and v are read through three layouts: contiguous
// [B, H, L, d]; the heads of a [B, L, 3, H, d] projection (rows 3 H d apart, batch and head
// strides that do not merge); and d-major (column stride L, a transposed view). Elements a view
// skips are NaN, so reading one shows up in the result. Backward gets the CPU forward's out and
// lse, so it is checked on its own.
//
// Tolerance, float32, relative to the size of each output: the scores are sums of d products
// and every output a sum over up to L keys or queries; two float32 evaluations in different
// orders differ by about sqrt(d + L) u in practice (d u + L u, ~3e-5 for the largest case here,
// at worst). 1e-4 for out and lse, 5e-4 for the gradients (two more chained sums), keep a
// margin over that while a wrong index, mask or tile edge is off by O(1). float64: 1e-10.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/ops/attention/args.h"
#include "kernels/registry.h"
#include "tensor/ops.h"
#include "tensor/random.h"
#include "tests/cuda/cuda_compare.h"
#include "tests/cuda/cuda_kernel_test_util.h"
#include "tests/test_util.h"

namespace prism {
namespace {

using cuda_kernel_test::DeviceArray;
using cuda_kernel_test::entries_of;
using cuda_kernel_test::random_vector;
using cuda_kernel_test::scaled_error;

enum class Layout { contiguous, qkv_heads, d_major };
const Layout kLayouts[] = {Layout::contiguous, Layout::qkv_heads, Layout::d_major};

const char* layout_name(Layout l) {
  return l == Layout::contiguous ? "contiguous" : l == Layout::qkv_heads ? "qkv heads" : "d-major";
}

// A [B, H, L, d] tensor in one of the layouts, in a host buffer with NaN wherever no element
// maps to.
template <class T>
struct Head4 {
  std::vector<T> data;
  int64_t s[4] = {};

  Head4(int64_t B, int64_t H, int64_t L, int64_t d, Layout layout, std::mt19937& rng) {
    int64_t size = B * H * L * d;
    if (layout == Layout::contiguous) s[0] = H * L * d, s[1] = L * d, s[2] = d, s[3] = 1;
    if (layout == Layout::qkv_heads) {  // slot 0 of [B, L, 3, H, d]
      s[0] = L * 3 * H * d, s[1] = d, s[2] = 3 * H * d, s[3] = 1;
      size = B * L * 3 * H * d;
    }
    if (layout == Layout::d_major) s[0] = H * d * L, s[1] = d * L, s[2] = 1, s[3] = L;
    data.assign(static_cast<size_t>(size), std::numeric_limits<T>::quiet_NaN());
    std::uniform_real_distribution<double> u(-1, 1);
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t h = 0; h < H; ++h) {
        for (int64_t r = 0; r < L; ++r) {
          for (int64_t c = 0; c < d; ++c)
            data[b * s[0] + h * s[1] + r * s[2] + c * s[3]] = T(u(rng));
        }
      }
    }
  }
};

struct Case {
  int64_t b, h, lq, lk, d;
  bool causal;
  double scale;  // 0: 1 / sqrt(d)
};

const Case kCases[] = {
    {1, 1, 1, 1, 1, false, 0},      {1, 1, 1, 1, 1, true, 0},      {2, 3, 7, 13, 5, false, 0},
    {1, 2, 129, 65, 64, false, 0},  {2, 2, 37, 37, 16, true, 0},   {1, 1, 200, 200, 80, true, 0},
    {1, 2, 65, 65, 33, false, 0.3}, {1, 1, 40, 40, 128, true, 0},  {1, 1, 33, 20, 256, false, 0},
    {1, 1, 9, 9, 300, true, 0},     {2, 1, 150, 150, 64, true, 0},
};

template <class T, class Args>
void fill_common(Args& a, const Case& c, const Head4<T>& q, const Head4<T>& k, const Head4<T>& v) {
  a.batch = c.b, a.heads = c.h, a.lq = c.lq, a.lk = c.lk, a.d = c.d;
  a.scale = c.scale == 0 ? 1 / std::sqrt(double(c.d)) : c.scale;
  a.causal = c.causal;
  for (int i = 0; i < 4; ++i)
    a.q_stride[i] = q.s[i], a.k_stride[i] = k.s[i], a.v_stride[i] = v.s[i];
}

// The scratch a variant gets from the front end on the GPU: the scores for naive variants, one
// value per query row for tiled ones in backward, none for tiled ones in forward.
int64_t workspace_for(const kernels::KernelEntry& e, const Case& c, bool backward) {
  const bool tiled = e.tag == kernels::VariantTag::fused || e.tag == kernels::VariantTag::optimized;
  if (!tiled) return kernels::attention_scores_workspace(c.b, c.h, c.lq, c.lk);
  return backward ? c.b * c.h * c.lq : 0;
}

template <class T>
void check_attention(std::mt19937& rng) {
  const auto& reg = kernels::registry();
  const double fwd_tol = sizeof(T) == 4 ? 1e-4 : 1e-10, bwd_tol = sizeof(T) == 4 ? 5e-4 : 1e-10;
  for (const Case& c : kCases) {
    for (Layout layout : kLayouts) {
      INFO(prism::testing::info_text((sizeof(T) == 4 ? "f32 " : "f64 "), "B", c.b, " H", c.h, " lq",
                                     c.lq, " lk", c.lk, " d", c.d, c.causal ? " causal " : " ",
                                     layout_name(layout)));
      Head4<T> q(c.b, c.h, c.lq, c.d, layout, rng), k(c.b, c.h, c.lk, c.d, layout, rng),
          v(c.b, c.h, c.lk, c.d, layout, rng);
      const size_t qn = size_t(c.b * c.h * c.lq * c.d), kn = size_t(c.b * c.h * c.lk * c.d);
      const size_t rows = size_t(c.b * c.h * c.lq);
      std::vector<T> scores(size_t(kernels::attention_scores_workspace(c.b, c.h, c.lq, c.lk)));

      // CPU reference: naive forward, then naive backward on its out and lse.
      std::vector<T> out(qn), lse(rows), dq(qn), dk(kn), dv(kn);
      std::vector<T> dout = random_vector<T>(qn, rng);
      kernels::AttentionArgs<T> f{};
      fill_common(f, c, q, k, v);
      f.q = q.data.data(), f.k = k.data.data(), f.v = v.data.data();
      f.out = out.data(), f.lse = lse.data();
      f.workspace = scores.data(), f.workspace_size = int64_t(scores.size());
      reg.at("attention", Device::cpu).at("naive").get<kernels::AttentionArgs, T>()(f);
      kernels::AttentionBackwardArgs<T> g{};
      fill_common(g, c, q, k, v);
      g.q = q.data.data(), g.k = k.data.data(), g.v = v.data.data();
      g.out = out.data(), g.dout = dout.data(), g.lse = lse.data();
      g.dq = dq.data(), g.dk = dk.data(), g.dv = dv.data();
      g.workspace = scores.data(), g.workspace_size = int64_t(scores.size());
      reg.at("attention_backward", Device::cpu)
          .at("naive")
          .get<kernels::AttentionBackwardArgs, T>()(g);

      DeviceArray<T> dq_in(q.data), dk_in(k.data), dv_in(v.data);
      for (const kernels::KernelEntry* e : entries_of("attention")) {
        if (!e->has(kernels::dtype_of<T>())) continue;
        INFO(prism::testing::info_text("attention ", e->name));
        const int64_t wn = workspace_for(*e, c, false);
        DeviceArray<T> d_out(std::vector<T>(qn, std::numeric_limits<T>::quiet_NaN()));
        DeviceArray<T> d_lse(std::vector<T>(rows, std::numeric_limits<T>::quiet_NaN()));
        DeviceArray<T> ws(std::vector<T>(size_t(std::max<int64_t>(wn, 1))));
        f.q = dq_in.get(), f.k = dk_in.get(), f.v = dv_in.get();
        f.out = d_out.get(), f.lse = d_lse.get();
        f.workspace = wn ? ws.get() : nullptr, f.workspace_size = wn;
        e->get<kernels::AttentionArgs, T>()(f);
        CHECK(scaled_error(d_out.to_host(), out) <= fwd_tol);
        CHECK(scaled_error(d_lse.to_host(), lse) <= fwd_tol);
      }
      DeviceArray<T> d_fout(out), d_dout(dout), d_flse(lse);
      for (const kernels::KernelEntry* e : entries_of("attention_backward")) {
        if (!e->has(kernels::dtype_of<T>())) continue;
        INFO(prism::testing::info_text("attention_backward ", e->name));
        const int64_t wn = workspace_for(*e, c, true);
        const T nan = std::numeric_limits<T>::quiet_NaN();
        DeviceArray<T> gq(std::vector<T>(qn, nan)), gk(std::vector<T>(kn, nan)),
            gv(std::vector<T>(kn, nan));
        DeviceArray<T> ws(std::vector<T>(size_t(std::max<int64_t>(wn, 1))));
        g.q = dq_in.get(), g.k = dk_in.get(), g.v = dv_in.get();
        g.out = d_fout.get(), g.dout = d_dout.get(), g.lse = d_flse.get();
        g.dq = gq.get(), g.dk = gk.get(), g.dv = gv.get();
        g.workspace = wn ? ws.get() : nullptr, g.workspace_size = wn;
        e->get<kernels::AttentionBackwardArgs, T>()(g);
        CHECK(scaled_error(gq.to_host(), dq) <= bwd_tol);
        CHECK(scaled_error(gk.to_host(), dk) <= bwd_tol);
        CHECK(scaled_error(gv.to_host(), dv) <= bwd_tol);
      }
    }
  }
}

TEST_CASE("every cuda attention variant matches the cpu naive kernels, forward and backward") {
  std::mt19937 rng(41);
  check_attention<float>(rng);
  check_attention<double>(rng);
}

// ---- the front end on CUDA tensors ------------------------------------------------------------

using cuda_test::gpu;
using cuda_test::mismatch;

TEST_CASE("cuda attention front end: 3-D and 4-D, permuted heads, causal, gradients") {
  manual_seed(42);
  for (const std::string& variant : cuda_test::cuda_variants("attention")) {
    cuda_test::ForceVariant fwd("attention", variant);
    cuda_test::ForceVariant bwd("attention_backward", variant);
    for (DType dt : cuda_test::kFloatTypes) {
      for (bool causal : {false, true}) {
        INFO(prism::testing::info_text(variant, " ", dtype_name(dt), causal ? " causal" : ""));
        const double rt = dt == DType::f32 ? 2e-4 : 1e-10, at = dt == DType::f32 ? 2e-5 : 1e-11;
        // [B, T, 3, H, d] projection split into heads by a permute: strided q, k, v views.
        Tensor qkv = randn({2, 19, 3, 2, 8}, dt);
        auto heads = [](const Tensor& t, int i) { return t.select(2, i).permute({0, 2, 1, 3}); };
        Tensor qc = heads(qkv, 0).detach().set_requires_grad();
        Tensor kc = heads(qkv, 1).detach().set_requires_grad();
        Tensor vc = heads(qkv, 2).detach().set_requires_grad();
        Tensor qkv_g = gpu(qkv);
        Tensor qg = heads(qkv_g, 0).detach().set_requires_grad();
        Tensor kg = heads(qkv_g, 1).detach().set_requires_grad();
        Tensor vg = heads(qkv_g, 2).detach().set_requires_grad();
        Tensor yc = attention(qc, kc, vc, causal), yg = attention(qg, kg, vg, causal);
        CHECK(mismatch(yc, yg, rt, at) == "");
        Tensor g = randn(yc.shape(), dt);
        yc.backward(g);
        yg.backward(gpu(g));
        REQUIRE(qg.grad().defined());
        CHECK(mismatch(qc.grad(), qg.grad(), rt, at) == "");
        CHECK(mismatch(kc.grad(), kg.grad(), rt, at) == "");
        CHECK(mismatch(vc.grad(), vg.grad(), rt, at) == "");
        // 3-D [BH, L, d] with Lq != Lk (not causal).
        if (!causal) {
          Tensor q3 = randn({3, 5, 4}, dt), k3 = randn({3, 11, 4}, dt), v3 = randn({3, 11, 4}, dt);
          CHECK(mismatch(attention(q3, k3, v3, false), attention(gpu(q3), gpu(k3), gpu(v3), false),
                         rt, at) == "");
        }
      }
    }
  }
}

}  // namespace
}  // namespace prism
