// Exercise 09, the checks: tanh as a vectorisable formula (README.md, next to this file).
//
// The cases compare the learner's tanh with the `naive` variant (std::tanh, libm's tanhf, one
// call per element) as every kernel exercise does: an absolute error, since |tanh| <= 1. That
// cannot see a relative error near 0, where tanh(x) ~ x is tiny, nor the sign of a zero, nor
// what happens to inputs no random case draws. So after the cases, more_checks measures the
// error in ulps against tanh in double precision over a sweep of the whole float range, and
// runs the special values one by one.
//
// The error in ulps of a result y for the true value t (tanh in double, itself within 1e-16):
//   ulp(t) = 2^(e - 23) for |t| in [2^e, 2^(e+1)), the spacing of the floats there
//            (2^-149, the denormals' spacing, below FLT_MIN = 2^-126)
//   error  = |y - t| / ulp(t)
// A correctly rounded float is within 0.5 ulp; glibc's tanhf is within 2.14 ulp over this sweep
// (README.md); NaN or infinity for a finite input counts as infinite.
#include <fmt/core.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "exercises/checker/checker.h"
#include "tensor/ops.h"
#include "tensor/random.h"
#include "kernels/ops/elementwise/args.h"

namespace prism::exercises {
namespace {

using kernels::UnaryArgs;

// The bound of the ulp sweep, and its reason (README.md has the measurements): the solution's
// worst is 1.34 ulp, glibc's tanhf's 2.14; 4 leaves room for another polynomial or a slightly
// less accurate exp, while the mistakes this check is for are off by 100 ulps or more.
constexpr double kUlpBound = 4.0;

const char* const kStridesHint =
    "the input is a view, so its elements are not at x[0], x[1], ...: walk the output in order "
    "and carry one index per layout dim, reading x at sum over dims of index * stride, as in "
    "exercise 01. A vectorised tanh needs its inputs side by side: copy a stretch of the walk "
    "into out first, then apply tanh to that stretch in place.";

const char* const kRangeHint =
    "a polynomial in x alone (a Taylor series: x - x^3/3 + 2x^5/15 - ...) is accurate only near "
    "0: the series diverges for |x| > pi/2, and even inside that a few terms are far off at "
    "|x| ~ 1. Reduce the range: near 0 a polynomial in x^2 times x, elsewhere "
    "tanh |x| = 1 - 2 / (exp(2|x|) + 1) with the sign put back.";

// n values (n >= 14) at tanh's edges: +-inf, +-FLT_MAX, +-1e30, +-100, +-44.5 (exp(89)
// overflows float32), the smallest and the largest denormal, then |N(0, 1)| (at most 3) times
// 10^k for k drawn from -40 to 38, with a random sign: from denormals to 3e38. tanh is +-1 or x
// on all of them but a few, and defined on every one.
Tensor extremes(int64_t n) {
  std::vector<float> v;
  for (float x : {std::numeric_limits<float>::infinity(), FLT_MAX, 1e30f, 100.0f, 44.5f,
                  FLT_TRUE_MIN, FLT_MIN - FLT_TRUE_MIN}) {
    v.push_back(x);
    v.push_back(-x);
  }
  Generator& g = default_generator();
  while (static_cast<int64_t>(v.size()) < n) {
    const int k = -40 + std::min(78, static_cast<int>(g.uniform() * 79));
    const double x = std::min(3.0, std::fabs(g.normal())) * std::pow(10.0, k);
    v.push_back(static_cast<float>(g.uniform() < 0.5 ? -x : x));
  }
  return from_vector(v, {n});
}

// Every view is cut from a tensor made (and scaled) first: scaling a view would make a fresh
// contiguous tensor, and the kernel would never see the strides.
std::vector<Case> tanh_cases() {
  return {
      {"[1]", {randn({1})}, {}, kRangeHint},
      {"[7]", {randn({7}) * 2.0}, {}, kRangeHint},
      {"[13,17] transposed view", {(randn({17, 13}) * 2.0).t()}, {}, kStridesHint},
      {"[6,10] every 2nd column", {(randn({6, 20}) * 2.0).slice(1, 0, 20, 2)}, {}, kStridesHint},
      {"[4,6,5] dims reversed (3 strided dims)",
       {(randn({5, 6, 4}) * 2.0).permute({2, 1, 0})},
       {},
       kStridesHint},
      {"[8,5] one row broadcast (stride 0)",
       {(randn({8, 5}) * 2.0).narrow(0, 0, 1).expand({8, 5})},
       {},
       "a stride can be 0 (a broadcast dim: every row reads the same 5 elements). Use the "
       "layout's strides as they are."},
      {"[4099] uniform in [-5, 5]", {rand({4099}, DType::f32, -5, 5)}, {}, kRangeHint},
      {"[1000] up to +-100 (saturation)",
       {randn({1000}) * 40.0},
       {},
       "for x above about 44, exp(2x) overflows float32 to inf, and (e - 1) / (e + 1) is "
       "inf / inf = NaN, while tanh x is 1. Use a form that goes to 1 when e is inf, "
       "1 - 2 / (e + 1), or saturate: tanh x rounds to +-1 in float32 for |x| > 9.01."},
      // The extremes, contiguous and through a view, and the empty tensor.
      {"[72] +-inf, +-FLT_MAX, denormals and 1e-40 to 1e38",
       {extremes(72)},
       {},
       "tanh(+-inf) = +-1, tanh x rounds to +-1 for |x| > 9.01 and is x for |x| < 2^-12. For "
       "x > 44, exp(2x) is inf: 1 - 2 / (e + 1) gives 1, (e - 1) / (e + 1) gives inf / inf = "
       "NaN. At x = +-inf a range reduction, x - n ln 2, is inf - inf = NaN: clamp |x| first "
       "(above 9.01 the result is +-1 anyway)."},
      {"[8,9] transposed view of +-inf, +-FLT_MAX, denormals and 1e-40 to 1e38",
       {extremes(72).reshape({9, 8}).t()},
       {},
       "the same extremes through a view: the path that walks a strided layout must compute "
       "the same tanh as the contiguous one, which the checks after the cases (on contiguous "
       "inputs only) cannot see. Copy the walk into out and run the one vectorised formula "
       "over it in place."},
      {"[0] empty (numel 0)",
       {randn({0})},
       {},
       "an empty tensor: numel is 0, and x and out have no elements. Test every loop's bound "
       "before its first step: a do/while, or a vector block of 16 taken whole, reads x and "
       "writes out where neither has an element."},
      {"[5,0] empty transposed view (inner dim 0)",
       {randn({0, 5}).t()},
       {},
       "the layout is [5, 0]: the last dim has size 0 and numel is 0. Write nothing, and do not "
       "divide by the last dim's size."},
      {"[1000,1031]", {randn({1000, 1031}) * 2.0}, {}, ""},
  };
}

// ---- the ulp sweep --------------------------------------------------------------------------

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

uint32_t to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

double ulp_of(double t) {
  const double at = std::fabs(t);
  if (at < FLT_MIN) return std::ldexp(1.0, -149);
  int e = 0;
  std::frexp(at, &e);  // at = m 2^e, m in [0.5, 1): the float spacing there is 2^(e - 24)
  return std::ldexp(1.0, e - 24);
}

// The error of `got` for input x, in ulps (infinite for a NaN or infinity where tanh x is a
// number, or a number where x is NaN).
double ulp_error(float x, float got) {
  if (std::isnan(x)) return std::isnan(got) ? 0.0 : std::numeric_limits<double>::infinity();
  if (!std::isfinite(got)) return std::numeric_limits<double>::infinity();
  const double t = std::tanh(static_cast<double>(x));
  return std::fabs(static_cast<double>(got) - t) / ulp_of(t);
}

// The worst error over a set of inputs.
struct Worst {
  double ulps = -1;
  float x = 0, got = 0;
  int64_t inputs = 0;
};

// Runs the kernel on `xs` (contiguous, as a [n] tensor arrives) and folds its errors into w.
// The kernel on a contiguous vector: its outputs.
std::vector<float> run_contiguous(void (*kernel)(const UnaryArgs<float>&),
                                  const std::vector<float>& xs) {
  std::vector<float> out(xs.size());
  UnaryArgs<float> a{};
  a.x = xs.data();
  a.out = out.data();
  a.numel = static_cast<int64_t>(xs.size());
  a.layout.ndim = 1;
  a.layout.shape[0] = a.numel;
  a.layout.stride[0] = 1;
  kernel(a);
  return out;
}

void sweep(void (*kernel)(const UnaryArgs<float>&), const std::vector<float>& xs, Worst& w) {
  const std::vector<float> out = run_contiguous(kernel, xs);
  for (size_t i = 0; i < xs.size(); ++i) {
    const double e = ulp_error(xs[i], out[i]);
    if (e > w.ulps) w = {e, xs[i], out[i], w.inputs};
  }
  w.inputs += static_cast<int64_t>(xs.size());
}

// Feeds `gen`'s inputs to the kernel in batches of 1M.
template <class Gen>
void sweep_all(void (*kernel)(const UnaryArgs<float>&), Gen gen, Worst& w) {
  std::vector<float> batch;
  batch.reserve(1 << 20);
  gen([&](float x) {
    batch.push_back(x);
    if (batch.size() == batch.capacity()) {
      sweep(kernel, batch, w);
      batch.clear();
    }
  });
  if (!batch.empty()) sweep(kernel, batch, w);
}

std::string float_str(float f) {
  if (std::isnan(f)) return "nan";
  if (f == 0) return std::signbit(f) ? "-0" : "+0";
  return fmt::format("{:.9g}", f);
}

// One line in the case lines' style, padded like them.
void print_check(const std::string& label, bool ok, const std::string& detail) {
  fmt::print("  {:<40}  {}  {}\n", label, ok ? "PASS" : "FAIL", detail);
}

// Prints the sweep's line; returns the hint when it failed, "" when it passed.
std::string ulp_sweep(void (*kernel)(const UnaryArgs<float>&), const Options& o) {
  // Steps: odd, so the sweep meets every exponent and both parities of the mantissa; --quick (the
  // test suite) takes about 25 times fewer points.
  const uint64_t step_all = o.quick ? 4099 : 127;
  const int dense = o.quick ? 1 << 18 : 1 << 22;
  const uint32_t step_small = o.quick ? 1021 : 37;
  Worst w;
  sweep_all(
      kernel,
      [&](auto emit) {
        // 1. Every step_all-th bit pattern of all 2^32: every binade, both signs, denormals,
        //    infinities and NaNs.
        for (uint64_t b = 0; b < (uint64_t{1} << 32); b += step_all) {
          emit(from_bits(static_cast<uint32_t>(b)));
        }
        // 2. Evenly spaced over [-10, 10], where tanh is neither x nor +-1.
        for (int i = 0; i <= dense; ++i) emit(-10.0f + 20.0f * static_cast<float>(i) / dense);
        // 3. Near 0: every step_small-th float with 2^-20 <= |x| < 1, both signs, where the
        //    result is small and an absolute error of 1e-7 is a large relative one.
        for (uint32_t b = to_bits(0x1p-20f); b < to_bits(1.0f); b += step_small) {
          emit(from_bits(b));
          emit(-from_bits(b));
        }
      },
      w);
  const bool ok = w.ulps <= kUlpBound;
  const double m = static_cast<double>(w.inputs) / 1e6;
  // 1.33, or 1.68e+07 for a formula that is far off.
  const std::string worst = std::isinf(w.ulps) ? "inf"
                            : w.ulps < 1000    ? fmt::format("{:.2f}", w.ulps)
                                               : fmt::format("{:.3g}", w.ulps);
  print_check(fmt::format("ulp sweep, {:.1f}M inputs", m), ok,
              fmt::format("worst {} ulp at x = {} (got {}, tanh = {:.9g}); bound {} ulp", worst,
                          float_str(w.x), float_str(w.got), std::tanh(static_cast<double>(w.x)),
                          kUlpBound));
  if (ok) return "";
  std::string why;
  if (std::isnan(w.x) || !std::isfinite(w.got)) {
    why =
        "A NaN must give a NaN, and a number never a NaN or an infinity: look at what your "
        "formula does with this input (an exp that overflows, inf / inf, a comparison that is "
        "false for NaN).";
  } else if (std::fabs(w.x) < 0.6f) {
    why =
        "Near 0 tanh x ~ x is small, so an absolute error the cases let pass can be many ulps "
        "there: 1 - 2 / (exp(2x) + 1) subtracts two numbers near 1 and loses the digits of a "
        "small result. Use an odd polynomial x + x^3 P(x^2) for small |x| (below about 0.6) "
        "and the exp form above it.";
  } else {
    why =
        "Your formula is least accurate at this input: check the polynomial's range (a "
        "polynomial fitted near 0 drifts as |x| grows) and where you switch between forms.";
  }
  return fmt::format(
      "hint (ulp sweep): it runs one float bit pattern in {} (of all 2^32), {} evenly spaced "
      "points of [-10, 10] and one float in {} with 2^-20 <= |x| < 1, and compares with tanh in "
      "double. {}",
      step_all, dense + 1, step_small, why);
}

// ---- special values -------------------------------------------------------------------------

struct Special {
  float x;
  const char* why;  // what a wrong result there means
};

// Prints the special values' line; returns the hint when one failed, "" when all passed.
std::string special_values(void (*kernel)(const UnaryArgs<float>&)) {
  const float inf = std::numeric_limits<float>::infinity();
  const float qnan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<Special> specials = {
      {0.0f, "tanh(+0) is +0"},
      {-0.0f, "tanh(-0) is -0: tanh is odd, so keep the sign of x (std::copysign)"},
      {inf, "tanh(+inf) is 1"},
      {-inf, "tanh(-inf) is -1"},
      {qnan,
       "a NaN in gives a NaN out (a comparison with NaN is false: check which branch it "
       "takes)"},
      {-qnan, "a NaN in gives a NaN out"},
      {from_bits(0x7fa00000u), "a NaN in gives a NaN out (this one has a payload)"},
      {from_bits(1), "the smallest denormal: tanh x = x to float precision below 2^-12"},
      {-from_bits(1), "the smallest negative denormal"},
      {from_bits(0x007fffffu), "the largest denormal: tanh x = x"},
      {FLT_MIN, "the smallest normal float: tanh x = x"},
      {FLT_MAX, "FLT_MAX: tanh is 1 (exp(2x) is inf: make sure that gives 1, not NaN)"},
      {-FLT_MAX, "-FLT_MAX: tanh is -1"},
      {44.5f, "exp(89) overflows float32: tanh is 1, not NaN"},
      {-44.5f, "tanh(-44.5) is -1"},
      {1e30f, "tanh(1e30) is 1"},
      {9.5f, "tanh(9.5) rounds to 1 in float32"},
  };
  std::vector<float> xs;
  for (const Special& s : specials) xs.push_back(s.x);
  const std::vector<float> out = run_contiguous(kernel, xs);
  std::string bad;
  const Special* first = nullptr;
  for (size_t i = 0; i < specials.size(); ++i) {
    const float x = xs[i], y = out[i];
    bool ok = ulp_error(x, y) <= kUlpBound;
    if (x == 0) ok = y == 0 && std::signbit(y) == std::signbit(x);
    if (ok) continue;
    if (!first) first = &specials[i];
    bad += fmt::format("{}tanh({}) = {}", bad.empty() ? "" : ", ", float_str(x), float_str(y));
  }
  print_check("special values", !first,
              first ? bad : "+-0, +-inf, NaNs, denormals, FLT_MIN, +-FLT_MAX, +-44.5, 1e30, 9.5");
  return first ? std::string("hint (special values): ") + first->why : "";
}

bool more_tanh_checks(const kernels::KernelEntry& user, const Options& o) {
  const auto kernel = user.get<UnaryArgs, float>();
  fmt::print("\nchecks after the cases, on contiguous inputs:\n");
  // Both run whatever the first finds, so the output shows every check's verdict and hint.
  const std::string special = special_values(kernel);
  const std::string sweep = ulp_sweep(kernel, o);
  if (!special.empty()) fmt::print("\n{}\n", special);
  if (!sweep.empty()) fmt::print("\n{}\n", sweep);
  return special.empty() && sweep.empty();
}

// ---- the exercise ---------------------------------------------------------------------------

const char* const kTier1 =
    "compute tanh with arithmetic, not a library call: an odd polynomial near 0 and "
    "1 - 2 / (exp(2|x|) + 1) with an exp of your own (range reduction and a polynomial, as "
    "kernels/cpu/fast_exp.h) elsewhere. std::exp per element is itself a call of about 3 ns.";
const char* const kTier2 =
    "let the compiler vectorise the loop: no branches (compute both forms and pick one with "
    "a ternary), no calls, no early exits in the function the loop inlines; for a strided "
    "layout copy a stretch of the walk into out, then run the vector loop over it in place. "
    "Build with -fopt-info-vec-optimized to see which loops became SIMD.";

Exercise make_tanh_vectorised() {
  Exercise e;
  e.id = "09_tanh_vectorised";
  e.file = "exercises/09_tanh_vectorised/tanh_vectorised.cpp";
  e.op = "tanh";
  e.title = "tanh as a formula the compiler vectorises, accurate to a few ulps (UnaryArgs)";
  e.tolerance = 4e-7;
  e.tolerance_why =
      "|tanh| <= 1, so this is an absolute error: 6.7 ulps of values in [0.5, 1) (ulp 6e-8), "
      "the sweep's 4-ulp bound plus the 2.14 ulps of libm's tanhf that naive calls. Near 0 "
      "it is loose; the ulp sweep after the cases checks the relative error there";
  e.arm_guard = &Guard<UnaryArgs>::arm;
  e.call = [](const Case& c) { return tanh(c.inputs[0]); };
  e.cases = tanh_cases;
  e.quick_timing_sizes = {"4096", "512x512:t"};
  // In L1; 64 MB each way, past the caches; a transposed view, 1 MB, inside L2. (Through a
  // transposed view past L2, 2048x2048:t, every read is a cache miss that costs more than
  // the tanh: README.md has that measurement, and exercise 01 that lesson.)
  e.timing_sizes = {"4096", "16777216", "512x512:t"};
  e.tiers = {{"2x faster than the scalar call", "naive", 0.5, kTier1},
             {"8x faster than the scalar call", "naive", 0.125, kTier2}};
  e.more_checks = more_tanh_checks;
  return e;
}

}  // namespace

static const bool registered = add_exercise(make_tanh_vectorised());

}  // namespace prism::exercises
