// The matmul ladder (naive, reordered, blocked, optimized, and Eigen's reference), called
// directly through the registry on raw buffers, against a float64 (long double for float64
// inputs) triple loop:
//   - odd shapes: size 1, primes, sizes that are not multiples of any tile, sizes that cross the
//     optimized kernel's cache blocks (k > 512, m > 252, n > 4096);
//   - every layout of A and B: row-major, transposed (column-major) and fully strided views,
//     with the elements a view skips set to NaN, so reading one shows up in the result;
//   - batches with their own strides, and broadcast operands (batch stride 0);
//   - float32 and float64, with 1 and 2 OpenMP threads;
//   - guard zones before and after C filled with a sentinel, and C itself pre-filled with NaN:
//     a kernel must write every element of C (and nothing else) without reading it first.
#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/ops/matmul/args.h"
#include "kernels/registry.h"
#include "tests/test_util.h"

namespace prism::kernels {
namespace {

const char* const kLadder[] = {"naive", "reference", "reordered", "blocked", "optimized"};

enum class Layout { row_major, transposed, strided };

const char* layout_name(Layout l) {
  switch (l) {
    case Layout::row_major:
      return "row-major";
    case Layout::transposed:
      return "transposed";
    case Layout::strided:
      return "strided";
  }
  return "?";
}

// `batch` rows x cols matrices in one buffer, element (b, i, j) at b*bs + i*rs + j*cs. Every
// element of the buffer that no matrix element maps to is NaN.
template <class T>
struct Operand {
  std::vector<T> data;
  int64_t bs = 0, rs = 0, cs = 0;

  Operand(int64_t batch, int64_t rows, int64_t cols, Layout layout, bool broadcast,
          std::mt19937& rng) {
    switch (layout) {
      case Layout::row_major:
        rs = cols, cs = 1;
        break;
      case Layout::transposed:
        rs = 1, cs = rows;
        break;
      case Layout::strided:
        rs = 2 * cols + 3, cs = 2;
        break;
    }
    const int64_t extent = (rows - 1) * rs + (cols - 1) * cs + 1;
    const int64_t gap = layout == Layout::strided ? 5 : 0;
    const int64_t stored = broadcast ? 1 : batch;
    bs = broadcast ? 0 : extent + gap;
    data.assign(stored * (extent + gap), std::numeric_limits<T>::quiet_NaN());
    std::uniform_real_distribution<double> uniform(-1, 1);
    for (int64_t b = 0; b < stored; ++b) {
      for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < cols; ++j) data[b * bs + i * rs + j * cs] = T(uniform(rng));
      }
    }
  }
  T at(int64_t b, int64_t i, int64_t j) const { return data[b * bs + i * rs + j * cs]; }
};

struct Shape {
  int64_t batch, m, n, k;
};

struct Case {
  Shape shape;
  Layout a_layout = Layout::row_major, b_layout = Layout::row_major;
  bool a_broadcast = false, b_broadcast = false;
};

// Runs one variant on one case and checks every element of C and the guard zones around it.
template <class T>
void check_case(const char* variant, const Case& cs, int threads) {
  using Acc = std::conditional_t<std::is_same_v<T, float>, double, long double>;
  const auto& entry = registry().at("matmul", Device::cpu).at(variant);
  auto* kernel = entry.template get<MatmulArgs, T>();
  const std::string name = variant;
  REQUIRE_MESSAGE(entry.has(dtype_of<T>()), name, " has no kernel for this dtype");

  const Shape s = cs.shape;
  std::mt19937 rng(static_cast<unsigned>(s.m * 1000003 + s.n * 1009 + s.k));
  const Operand<T> A(s.batch, s.m, s.k, cs.a_layout, cs.a_broadcast, rng);
  const Operand<T> B(s.batch, s.k, s.n, cs.b_layout, cs.b_broadcast, rng);

  constexpr int64_t kGuard = 67;
  const T sentinel = T(-12345.25);
  const int64_t c_size = s.batch * s.m * s.n;
  std::vector<T> c(c_size + 2 * kGuard, sentinel);
  std::fill(c.begin() + kGuard, c.begin() + kGuard + c_size, std::numeric_limits<T>::quiet_NaN());

  MatmulArgs<T> args{};
  args.a = A.data.data();
  args.b = B.data.data();
  args.c = c.data() + kGuard;
  args.batch = s.batch, args.m = s.m, args.n = s.n, args.k = s.k;
  args.a_bs = A.bs, args.a_rs = A.rs, args.a_cs = A.cs;
  args.b_bs = B.bs, args.b_rs = B.rs, args.b_cs = B.cs;

  const int saved_threads = omp_get_max_threads();
  omp_set_num_threads(threads);
  kernel(args);
  omp_set_num_threads(saved_threads);

  // (doctest prints a const char* as a pointer, so the description is one std::string.)
  const std::string what =
      std::string("variant ") + variant + ", " + (sizeof(T) == 4 ? "float32" : "float64") + ", " +
      std::to_string(threads) + " thread(s), batch " + std::to_string(s.batch) + ", m " +
      std::to_string(s.m) + ", n " + std::to_string(s.n) + ", k " + std::to_string(s.k) + ", A " +
      layout_name(cs.a_layout) + (cs.a_broadcast ? " (broadcast)" : "") + ", B " +
      layout_name(cs.b_layout) + (cs.b_broadcast ? " (broadcast)" : "");
  INFO(what);
  int64_t guard_hits = 0;
  for (int64_t i = 0; i < kGuard; ++i) {
    guard_hits += std::memcmp(&c[i], &sentinel, sizeof(T)) != 0;
    guard_hits += std::memcmp(&c[kGuard + c_size + i], &sentinel, sizeof(T)) != 0;
  }
  CHECK_MESSAGE(guard_hits == 0, "elements written outside C: ", guard_hits);

  // Error bound for a sum of k products rounded in T: a few k eps times the sum of magnitudes.
  const double eps = std::numeric_limits<T>::epsilon();
  int64_t bad = 0;
  std::string first_bad;
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t i = 0; i < s.m; ++i) {
      for (int64_t j = 0; j < s.n; ++j) {
        Acc want = 0, magnitude = 0;
        for (int64_t p = 0; p < s.k; ++p) {
          const Acc x = Acc(A.at(b, i, p)) * Acc(B.at(b, p, j));
          want += x;
          magnitude += x < 0 ? -x : x;
        }
        const double got = double(c[kGuard + (b * s.m + i) * s.n + j]);
        const double tol = 2.0 * double(s.k + 1) * eps * double(magnitude) + 1e-30;
        if (!(std::abs(got - double(want)) <= tol)) {
          if (bad++ == 0) {
            first_bad = "C[" + std::to_string(b) + "," + std::to_string(i) + "," +
                        std::to_string(j) + "] = " + std::to_string(got) + ", want " +
                        std::to_string(double(want));
          }
        }
      }
    }
  }
  CHECK_MESSAGE(bad == 0, bad, " wrong elements, first: ", first_bad);
}

template <class T>
void check_all_variants(const Case& cs, int threads = 1) {
  for (const char* v : kLadder) check_case<T>(v, cs, threads);
}

const Shape kOddShapes[] = {
    {1, 1, 1, 1},     {1, 7, 13, 5},   {1, 17, 1, 31}, {1, 1, 17, 31},   {1, 13, 11, 1},
    {1, 33, 65, 129}, {1, 15, 33, 17}, {1, 29, 31, 2}, {1, 128, 10, 37}, {1, 200, 300, 150},
};

TEST_CASE("matmul ladder: odd shapes, row-major, float32 and float64") {
  for (const Shape& s : kOddShapes) {
    check_all_variants<float>({s});
    check_all_variants<double>({s});
  }
}

TEST_CASE("matmul ladder: transposed and strided operands") {
  const Layout layouts[] = {Layout::row_major, Layout::transposed, Layout::strided};
  // Narrow products (n = 10, computed transposed by the optimized kernel) and one-row and
  // one-column products (its matrix-vector path) included.
  for (const Shape& s : {Shape{1, 7, 13, 5}, Shape{1, 33, 65, 129}, Shape{1, 70, 10, 40},
                         Shape{1, 10, 70, 40}, Shape{1, 1, 37, 150}, Shape{1, 37, 1, 150}}) {
    for (Layout la : layouts) {
      for (Layout lb : layouts) {
        Case cs{s, la, lb};
        check_all_variants<float>(cs);
        check_all_variants<double>(cs);
      }
    }
  }
}

TEST_CASE("matmul ladder: shapes that cross the optimized kernel's cache blocks") {
  // k > 512 (two k blocks: the second accumulates into C), m > 252 floats / 126 doubles (two
  // row blocks), n > 4096 floats / 2048 doubles (two column panels).
  for (const Shape& s : {Shape{1, 30, 40, 600}, Shape{1, 300, 37, 20}, Shape{1, 3, 4200, 5}}) {
    for (Layout lb : {Layout::row_major, Layout::transposed}) {
      check_all_variants<float>({s, Layout::row_major, lb});
      check_all_variants<double>({s, Layout::transposed, lb});
    }
  }
}

TEST_CASE("matmul ladder: the dot-product form (few outputs, long k, both operands along k)") {
  // A row-major and B transposed, so that every row of A and column of B runs along k, at most
  // 512 outputs and k >= 256 (kernels/ops/matmul/optimized.cpp, dot_form): edges of its 4 x 3
  // blocks, k that ends in a partial vector, a narrow C (computed transposed first) and a batch.
  for (const Shape& s : {Shape{1, 9, 16, 676}, Shape{1, 16, 9, 676}, Shape{1, 5, 7, 257},
                         Shape{1, 2, 2, 1000}, Shape{1, 22, 23, 256}, Shape{3, 11, 13, 300}}) {
    check_all_variants<float>({s, Layout::row_major, Layout::transposed});
    check_all_variants<double>({s, Layout::row_major, Layout::transposed});
  }
}

TEST_CASE("matmul ladder: split-k (few rows of C, a row-major B read in place, k >= 256)") {
  // kernels/ops/matmul/optimized.cpp, split_k_form: k is cut in two halves at every thread count.
  // The MLP's dx = g @ W, an odd k (unequal halves) with edge tiles, two rows (serial: under the
  // threads' threshold), the tallest C that qualifies, and a strided A (packed through its
  // strides).
  const Case cases[] = {
      {{1, 64, 256, 256}},
      {{1, 67, 197, 509}},
      {{1, 2, 33, 257}},
      {{1, 224, 100, 300}},
      {{1, 65, 129, 300}, Layout::strided, Layout::row_major},
  };
  for (const Case& cs : cases) {
    for (int threads : {1, 2}) {
      check_all_variants<float>(cs, threads);
      check_case<double>("optimized", cs, threads);
    }
  }
}

TEST_CASE("matmul ladder: batches, with their own strides and broadcast") {
  const Shape s{3, 19, 23, 11};
  check_all_variants<float>({s});
  check_all_variants<float>({s, Layout::transposed, Layout::strided});
  // A shared B under a contiguous A (one taller product) and under a transposed A.
  check_all_variants<float>({s, Layout::row_major, Layout::row_major, false, true});
  check_all_variants<float>({s, Layout::transposed, Layout::row_major, false, true});
  // A shared A.
  check_all_variants<float>({s, Layout::row_major, Layout::transposed, true, false});
  check_all_variants<double>({s, Layout::strided, Layout::row_major, true, false});
  check_all_variants<double>({s, Layout::row_major, Layout::transposed, false, true});
}

TEST_CASE("matmul ladder: 2 OpenMP threads on products large enough to be split") {
  // Each is over the 4M multiply-adds from which the optimized kernel uses threads; a batched
  // one (the split runs across batches), a narrow one (computed transposed) and one whose split
  // falls inside a row of tiles.
  const Case cases[] = {
      {{1, 200, 300, 150}},
      {{1, 201, 299, 151}, Layout::transposed, Layout::transposed},
      {{5, 97, 103, 101}, Layout::row_major, Layout::strided},
      {{3, 100, 130, 120}, Layout::row_major, Layout::row_major, false, true},
      {{1, 700, 10, 700}},
      {{1, 20, 1500, 300}, Layout::strided, Layout::row_major},
  };
  for (const Case& cs : cases) {
    check_all_variants<float>(cs, 2);
    check_case<double>("optimized", cs, 2);
  }
}

TEST_CASE("matmul ladder: k = 0 gives zeros, and empty products write nothing") {
  for (const char* v : kLadder) {
    // k = 0: C is all zeros.
    std::vector<float> a(1), b(1), c(6 + 2, -1.0f);
    MatmulArgs<float> args{a.data(), b.data(), c.data() + 1, 1, 2, 3, 0, 0, 0, 1, 0, 3, 1};
    registry().at("matmul", Device::cpu).at(v).get<MatmulArgs, float>()(args);
    const std::string name = v;
    INFO(prism::testing::info_text("variant ", name));
    CHECK(c.front() == -1.0f);
    CHECK(c.back() == -1.0f);
    for (int i = 1; i <= 6; ++i) CHECK(c[i] == 0.0f);
    // m = 0: nothing is written.
    args.m = 0;
    args.k = 4;
    std::fill(c.begin(), c.end(), -1.0f);
    registry().at("matmul", Device::cpu).at(v).get<MatmulArgs, float>()(args);
    for (float x : c) CHECK(x == -1.0f);
  }
}

}  // namespace
}  // namespace prism::kernels
