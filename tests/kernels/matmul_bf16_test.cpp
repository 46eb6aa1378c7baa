// matmul_bf16's variants (reference, naive, blocked, optimized, amx), called through the registry
// on raw buffers, against a float64 loop written here:
//   - odd shapes: size 1, primes, an odd k (the pair layout's zero partner), k past one k block
//     (512) and m past one row block (96), n past one column tile (32);
//   - row-major, transposed and strided views (the skipped elements are NaN: reading one shows);
//   - a batch with its own strides and a batch over a shared B (batch stride 0);
//   - 1 and 2 OpenMP threads, bit-identical;
//   - C pre-filled with NaN: every element must be written.
// The bound is derived, not tuned: inputs are bf16 values and their products exact in float32,
// so only the float32 sum rounds, and any order of k additions errs by at most
// gamma_k sum_p |a_ip b_pj|, gamma_k = k u / (1 - k u), u = 2^-24 (Higham, "Accuracy and
// Stability of Numerical Algorithms", 3.1). vdpbf16ps also flushes denormals, which the inputs
// here never are.
// Where the CPU has AVX512-BF16 "optimized" runs vdpbf16ps and "blocked" the portable
// microkernel; elsewhere both run the portable one. Where it has AMX (and Linux grants the tile
// state) "amx" runs tdpbf16ps; elsewhere it runs the optimized path. The test says which.
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/costs.h"
#include "kernels/ops/matmul_bf16/op.h"
#include "kernels/registry.h"

namespace prism::kernels {
namespace {

struct Shape {
  int64_t batch, m, k, n;
  bool ta, tb;     // A / B stored transposed
  int64_t stride;  // column stride multiplier for a strided (every other element) view
  bool shared_b;   // B's batch stride 0
};

void check_variant(const KernelEntry& v, const Shape& s, int threads) {
  std::mt19937 rng(static_cast<uint32_t>(s.m * 131 + s.k * 7 + s.n));
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Storage: A as [batch][rows][cols * stride] with rows x cols = m x k (or k x m transposed).
  const int64_t ar = s.ta ? s.k : s.m, ac = s.ta ? s.m : s.k;
  const int64_t br = s.tb ? s.n : s.k, bc = s.tb ? s.k : s.n;
  const int64_t bbatch = s.shared_b ? 1 : s.batch;
  std::vector<BFloat16> A(static_cast<size_t>(s.batch * ar * ac * s.stride), to_bf16(nan));
  std::vector<BFloat16> B(static_cast<size_t>(bbatch * br * bc * s.stride), to_bf16(nan));
  for (size_t i = 0; i < A.size(); i += static_cast<size_t>(s.stride)) A[i] = to_bf16(dist(rng));
  for (size_t i = 0; i < B.size(); i += static_cast<size_t>(s.stride)) B[i] = to_bf16(dist(rng));
  MatmulBf16Args<float> g{};
  g.a = A.data(), g.b = B.data();
  g.batch = s.batch, g.m = s.m, g.n = s.n, g.k = s.k;
  // Element (i, p) of A at i * a_rs + p * a_cs; a stored row holds ac * stride elements.
  g.a_rs = s.ta ? s.stride : ac * s.stride;
  g.a_cs = s.ta ? ac * s.stride : s.stride;
  g.a_bs = ar * ac * s.stride;
  g.b_rs = s.tb ? s.stride : bc * s.stride;
  g.b_cs = s.tb ? bc * s.stride : s.stride;
  g.b_bs = s.shared_b ? 0 : br * bc * s.stride;
  std::vector<float> C(static_cast<size_t>(s.batch * s.m * s.n), nan);
  g.c = C.data();
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  v.get<MatmulBf16Args, float>()(g);
  omp_set_num_threads(saved);
  const double u = std::ldexp(1.0, -24);
  const double gamma = s.k * u / (1 - s.k * u);
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t i = 0; i < s.m; ++i) {
      for (int64_t j = 0; j < s.n; ++j) {
        double ref = 0, mag = 0;
        for (int64_t p = 0; p < s.k; ++p) {
          const double x = to_float(A[static_cast<size_t>(b * g.a_bs + i * g.a_rs + p * g.a_cs)]);
          const double y = to_float(B[static_cast<size_t>(b * g.b_bs + p * g.b_rs + j * g.b_cs)]);
          ref += x * y;
          mag += std::abs(x * y);
        }
        const float got = C[static_cast<size_t>((b * s.m + i) * s.n + j)];
        if (!(std::abs(got - ref) <= gamma * mag + 1e-30)) {
          FAIL_CHECK(v.name << " " << s.batch << "x" << s.m << "x" << s.k << "x" << s.n
                            << " ta=" << s.ta << " tb=" << s.tb << " stride=" << s.stride
                            << " threads=" << threads << ": C[" << b << "][" << i << "][" << j
                            << "] = " << got << ", float64 " << ref << ", bound " << gamma * mag);
          return;
        }
      }
    }
  }
}

const std::vector<Shape>& shapes() {
  static const std::vector<Shape> s = {
      {1, 1, 1, 1, false, false, 1, false},    {1, 7, 13, 5, false, false, 1, false},
      {1, 17, 1, 31, false, false, 1, false},  {1, 1, 64, 1, false, false, 1, false},
      {1, 33, 65, 37, true, false, 1, false},  {1, 45, 31, 67, false, true, 1, false},
      {1, 37, 29, 41, true, true, 1, false},   {1, 13, 11, 7, false, false, 2, false},
      {1, 11, 9, 13, true, true, 2, false},    {3, 13, 7, 5, false, false, 1, false},
      {2, 25, 31, 37, false, true, 1, true},   {1, 101, 1031, 41, false, false, 1, false},
      {1, 97, 67, 131, false, true, 1, false}, {2, 3, 5, 2, true, false, 2, false},
  };
  return s;
}

TEST_CASE("matmul_bf16: every variant within the float32-summation bound of a float64 loop") {
  const OpKernels& op = registry().at("matmul_bf16", Device::cpu);
  const std::string path = __builtin_cpu_supports("avx512bf16")
                               ? "yes: optimized ran vdpbf16ps, blocked the portable microkernel"
                               : "no: optimized and blocked both ran the portable microkernel";
  MESSAGE("AVX512-BF16 on this CPU: " << path);
  MESSAGE("AMX: amx is " << (op.default_entry().name == "amx"
                                 ? std::string("the default: it ran tdpbf16ps")
                                 : std::string(
                                       "not usable here (CPU or OS): it ran the optimized path")));
  CHECK(op.entries().size() == 5);  // reference, naive, blocked, optimized, amx
  for (const auto& v : op.entries()) {
    for (const Shape& s : shapes()) {
      for (int threads : {1, 2}) check_variant(v, s, threads);
    }
  }
}

TEST_CASE("matmul_bf16: optimized is bit-identical at 1 and 2 threads") {
  const KernelEntry& v = registry().at("matmul_bf16", Device::cpu).at("optimized");
  const int64_t m = 130, k = 600, n = 70;
  std::vector<BFloat16> A(static_cast<size_t>(m * k)), B(static_cast<size_t>(k * n));
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (auto& x : A) x = to_bf16(dist(rng));
  for (auto& x : B) x = to_bf16(dist(rng));
  std::vector<float> C1(static_cast<size_t>(m * n)), C2(C1.size());
  MatmulBf16Args<float> g{A.data(), B.data(), C1.data(), 1, m, n, k, m * k, k, 1, 0, n, 1};
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  v.get<MatmulBf16Args, float>()(g);
  g.c = C2.data();
  omp_set_num_threads(2);
  v.get<MatmulBf16Args, float>()(g);
  omp_set_num_threads(saved);
  CHECK(C1 == C2);
}

TEST_CASE("matmul_bf16: cost counts bf16 inputs at 2 bytes and the float32 output at 4") {
  // [3, 4, 5] @ [5, 6]: 3 * 4 * 6 * 5 = 360 MACs; bytes = 2 (60 + 30) + 4 (3 * 4 * 6) = 468.
  const profiler::Cost c = costs::matmul_bf16({3, 4, 5}, {5, 6});
  CHECK(c.macs == 360);
  CHECK(c.flops == 720);
  CHECK(c.bytes == 468);
  CHECK(std::string(kernels::ops::matmul_bf16.cost_formula).find("bf16") != std::string::npos);
}

}  // namespace
}  // namespace prism::kernels
