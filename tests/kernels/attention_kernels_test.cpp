// The attention kernels called directly on raw buffers, as the lab calls them: every variant
// against a long-double loop over the definition, forward (out and lse) and backward (dq, dk,
// dv), with q, k, v in a head-interleaved layout ([B, L, H, d] memory read as [B, H, L, d]) and
// with a column stride; the workspace contract (a tiled kernel given tiles for one thread
// only); and the variants' names, tags and defaults.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/ops/attention/args.h"
#include "kernels/registry.h"

namespace prism::kernels {
namespace {

using LD = long double;

// One problem: sizes, the strides of q, k, v and their values (float64, converted per dtype).
struct Problem {
  int64_t b, h, lq, lk, d;
  bool causal;
  double scale;
  int64_t qs[4], ks[4], vs[4];
  std::vector<double> q, k, v, dout;
};

uint64_t g_state = 12345;
double uniform() {  // splitmix64 -> [-1, 1)
  uint64_t z = (g_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) / 9007199254740992.0 * 2 - 1;
}

// Strides of [b, h, l, d] stored as [b, l, h, d] (interleaved heads), or, with `col_stride`, as
// [b, h, d, l] (a transposed head: column stride l).
void strides_for(int64_t h, int64_t l, int64_t d, bool transposed, int64_t* s) {
  if (transposed) {
    s[0] = h * d * l, s[1] = d * l, s[2] = 1, s[3] = l;
  } else {
    s[0] = l * h * d, s[1] = d, s[2] = h * d, s[3] = 1;
  }
}

Problem make(int64_t b, int64_t h, int64_t lq, int64_t lk, int64_t d, bool causal,
             bool transposed) {
  Problem p{b,  h,  lq, lk, d,  causal, 1.0 / std::sqrt(static_cast<double>(d)),
            {}, {}, {}, {}, {}, {},     {}};
  strides_for(h, lq, d, transposed, p.qs);
  strides_for(h, lk, d, false, p.ks);
  strides_for(h, lk, d, transposed, p.vs);
  auto fill = [](std::vector<double>& x, int64_t n) {
    x.resize(static_cast<size_t>(n));
    for (double& e : x) e = 2 * uniform();
  };
  fill(p.q, b * h * lq * d);
  fill(p.k, b * h * lk * d);
  fill(p.v, b * h * lk * d);
  fill(p.dout, b * h * lq * d);
  return p;
}

double at(const std::vector<double>& x, const int64_t* s, int64_t b, int64_t h, int64_t r,
          int64_t c) {
  return x[static_cast<size_t>(b * s[0] + h * s[1] + r * s[2] + c * s[3])];
}

// The definition in long double: out, lse and the three gradients (contiguous layouts).
struct Expected {
  std::vector<double> out, lse, dq, dk, dv;
};

Expected reference(const Problem& p) {
  Expected e;
  const int64_t d = p.d;
  e.out.assign(static_cast<size_t>(p.b * p.h * p.lq * d), 0);
  e.lse.assign(static_cast<size_t>(p.b * p.h * p.lq), 0);
  e.dq.assign(e.out.size(), 0);
  e.dk.assign(static_cast<size_t>(p.b * p.h * p.lk * d), 0);
  e.dv.assign(e.dk.size(), 0);
  for (int64_t b = 0; b < p.b; ++b) {
    for (int64_t h = 0; h < p.h; ++h) {
      const int64_t bh = b * p.h + h;
      for (int64_t i = 0; i < p.lq; ++i) {
        const int64_t visible = p.causal ? i + 1 : p.lk;
        std::vector<LD> s(static_cast<size_t>(visible)), dp(s.size());
        LD m = -std::numeric_limits<LD>::infinity();
        for (int64_t j = 0; j < visible; ++j) {
          LD dot = 0;
          for (int64_t c = 0; c < d; ++c)
            dot += LD(at(p.q, p.qs, b, h, i, c)) * at(p.k, p.ks, b, h, j, c);
          s[j] = dot * p.scale;
          m = std::max(m, s[j]);
        }
        LD l = 0;
        for (LD& x : s) l += std::exp(x - m);
        for (LD& x : s) x = std::exp(x - m) / l;  // P
        e.lse[bh * p.lq + i] = static_cast<double>(m + std::log(l));
        const double* g = &p.dout[static_cast<size_t>((bh * p.lq + i) * d)];
        LD big_d = 0;
        for (int64_t c = 0; c < d; ++c) {
          LD o = 0;
          for (int64_t j = 0; j < visible; ++j) o += s[j] * at(p.v, p.vs, b, h, j, c);
          e.out[(bh * p.lq + i) * d + c] = static_cast<double>(o);
          big_d += o * g[c];
        }
        for (int64_t j = 0; j < visible; ++j) {
          LD dpj = 0;
          for (int64_t c = 0; c < d; ++c) dpj += LD(g[c]) * at(p.v, p.vs, b, h, j, c);
          const LD ds = s[j] * (dpj - big_d);
          for (int64_t c = 0; c < d; ++c) {
            e.dv[(bh * p.lk + j) * d + c] += static_cast<double>(s[j] * g[c]);
            e.dq[(bh * p.lq + i) * d + c] +=
                static_cast<double>(p.scale * ds * at(p.k, p.ks, b, h, j, c));
            e.dk[(bh * p.lk + j) * d + c] +=
                static_cast<double>(p.scale * ds * at(p.q, p.qs, b, h, i, c));
          }
        }
      }
    }
  }
  return e;
}

template <class T>
std::vector<T> as(const std::vector<double>& x) {
  return std::vector<T>(x.begin(), x.end());
}

double max_err(const std::vector<double>& want, const std::vector<double>& got) {
  double m = 0;
  for (size_t i = 0; i < want.size(); ++i) m = std::max(m, std::abs(want[i] - got[i]));
  return m;
}

template <class T>
int64_t workspace_size(const KernelEntry& e, const Problem& p, int workers) {
  return e.tag == VariantTag::naive ? attention_scores_workspace(p.b, p.h, p.lq, p.lk)
                                    : attention_tiled_workspace(p.lq, p.d, workers);
}

// Runs variant e forward and backward on p; returns out, lse, dq, dk, dv as doubles.
template <class T>
Expected run(const KernelEntry& fwd, const KernelEntry& bwd, const Problem& p, int workers) {
  std::vector<T> q = as<T>(p.q), k = as<T>(p.k), v = as<T>(p.v), dout = as<T>(p.dout);
  std::vector<T> out(static_cast<size_t>(p.b * p.h * p.lq * p.d), std::nan(""));
  std::vector<T> lse(static_cast<size_t>(p.b * p.h * p.lq), std::nan(""));
  std::vector<T> ws(static_cast<size_t>(workspace_size<T>(fwd, p, workers)));
  AttentionArgs<T> a{};
  a.q = q.data(), a.k = k.data(), a.v = v.data(), a.out = out.data(), a.lse = lse.data();
  a.workspace = ws.data();
  a.workspace_size = static_cast<int64_t>(ws.size());
  a.batch = p.b, a.heads = p.h, a.lq = p.lq, a.lk = p.lk, a.d = p.d;
  for (int i = 0; i < 4; ++i)
    a.q_stride[i] = p.qs[i], a.k_stride[i] = p.ks[i], a.v_stride[i] = p.vs[i];
  a.scale = p.scale;
  a.causal = p.causal;
  fwd.get<AttentionArgs, T>()(a);

  std::vector<T> dq(out.size(), std::nan("")), dk(k.size(), std::nan("")),
      dv(k.size(), std::nan(""));
  std::vector<T> wsb(static_cast<size_t>(workspace_size<T>(bwd, p, workers)));
  AttentionBackwardArgs<T> g{};
  g.q = a.q, g.k = a.k, g.v = a.v, g.out = out.data(), g.dout = dout.data(), g.lse = lse.data();
  g.dq = dq.data(), g.dk = dk.data(), g.dv = dv.data();
  g.workspace = wsb.data();
  g.workspace_size = static_cast<int64_t>(wsb.size());
  g.batch = a.batch, g.heads = a.heads, g.lq = a.lq, g.lk = a.lk, g.d = a.d;
  for (int i = 0; i < 4; ++i)
    g.q_stride[i] = p.qs[i], g.k_stride[i] = p.ks[i], g.v_stride[i] = p.vs[i];
  g.scale = a.scale;
  g.causal = a.causal;
  bwd.get<AttentionBackwardArgs, T>()(g);
  auto d = [](const std::vector<T>& x) { return std::vector<double>(x.begin(), x.end()); };
  return {d(out), d(lse), d(dq), d(dk), d(dv)};
}

template <class T>
void check_all_variants(double tol) {
  const OpKernels& fwd = registry().at("attention", Device::cpu);
  const OpKernels& bwd = registry().at("attention_backward", Device::cpu);
  struct Shape {
    int64_t b, h, lq, lk, d;
    bool causal, transposed;
  };
  for (const Shape& s :
       {Shape{1, 1, 1, 1, 1, true, false}, Shape{2, 3, 37, 37, 3, true, true},
        Shape{1, 2, 5, 70, 8, false, false}, Shape{1, 2, 70, 5, 8, false, true},
        Shape{1, 1, 130, 130, 80, true, false}, Shape{2, 1, 67, 129, 16, false, true}}) {
    const Problem p = make(s.b, s.h, s.lq, s.lk, s.d, s.causal, s.transposed);
    const Expected want = reference(p);
    for (const KernelEntry& e : fwd.entries()) {
      if (e.tag == VariantTag::user) continue;
      for (int workers : {1, 3}) {
        INFO(e.name << " workers " << workers << " B" << s.b << " H" << s.h << " Lq" << s.lq
                    << " Lk" << s.lk << " d" << s.d << (s.causal ? " causal" : "")
                    << (s.transposed ? " transposed" : " interleaved"));
        const Expected got = run<T>(e, bwd.at(e.name), p, workers);
        CHECK(max_err(want.out, got.out) < tol);
        CHECK(max_err(want.lse, got.lse) < tol);
        CHECK(max_err(want.dq, got.dq) < 10 * tol);
        CHECK(max_err(want.dk, got.dk) < 10 * tol);
        CHECK(max_err(want.dv, got.dv) < 10 * tol);
      }
    }
  }
}

TEST_CASE("attention kernels: every variant matches the definition, float64") {
  check_all_variants<double>(1e-12);
}

TEST_CASE("attention kernels: every variant matches the definition, float32") {
  check_all_variants<float>(2e-5);
}

TEST_CASE("attention kernels: the reference loop can fail") {
  // A wrong scale changes the output by far more than the tolerance.
  Problem p = make(1, 1, 9, 9, 4, false, false);
  const Expected want = reference(p);
  p.scale *= 1.01;
  CHECK(max_err(want.out, reference(p).out) > 1e-6);
}

TEST_CASE("attention kernels: variants, tags and defaults") {
  const OpKernels& fwd = registry().at("attention", Device::cpu);
  const OpKernels& bwd = registry().at("attention_backward", Device::cpu);
  for (const OpKernels* k : {&fwd, &bwd}) {
    CHECK(k->at("naive").tag == VariantTag::naive);
    CHECK(k->at("flash").tag == VariantTag::fused);
    CHECK(k->default_entry().name == "flash");
    CHECK(k->at("flash").has(DType::f64));
  }
  const OpKernels& lg = registry().at("linear_gelu", Device::cpu);
  CHECK(lg.at("unfused").tag == VariantTag::naive);
  CHECK(lg.at("fused").tag == VariantTag::fused);
  CHECK(lg.default_entry().name == "fused");
}

TEST_CASE("attention kernels: the tiled workspace is linear in L, the naive one quadratic") {
  const int64_t d = 64;
  const int64_t w1 = attention_tiled_workspace(1024, d, 1);
  CHECK(attention_tiled_workspace(2048, d, 1) - w1 == 1024);  // one value per query row
  CHECK(attention_tiled_workspace(1024, d, 2) == 2 * w1);
  CHECK(attention_scores_workspace(1, 8, 2048, 2048) ==
        4 * attention_scores_workspace(1, 8, 1024, 1024));
}

}  // namespace
}  // namespace prism::kernels
