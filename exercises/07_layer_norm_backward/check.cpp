// Exercise 07's checks: the gradient of layer_norm, written by hand (README.md has the
// derivation). A kernel exercise (checker.h): each case runs layer_norm forward in float32 with
// autograd recording, then backward with a random upstream gradient g, once with the `naive`
// variant of layer_norm_backward (sums in double) and once with the learner's kernel (guarded,
// then plain), and compares the three gradients. Then more_checks puts the reference itself on
// trial: prism's finite-difference gradcheck of the float64 op, and the learner's float32
// gradients against the float64 ones that autograd computes from the same inputs.
//
// The compared output stacks the gradients as one [rows + 2, cols] tensor:
//   rows 0 .. R-1   dx (as [R, cols], R = the rows layer_norm normalises; absent when x is not
//                   trained),
//   row R           dweight,  row R + 1  dbias (each absent when there is no weight, no bias),
// so a mismatch "at [r, j]" names the gradient and the column.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "exercises/checker/checker.h"
#include "exercises/checker/compare.h"
#include "tensor/autograd/gradcheck.h"
#include "tensor/ops.h"
#include "tensor/random.h"
#include "kernels/ops/layer_norm/args.h"

namespace prism::exercises {
namespace {

using kernels::LayerNormBackwardArgs;

constexpr double kTolerance = 1e-5;

const char* const kXStridesHint =
    "x reaches the backward kernel as the forward saw it: a strided [rows, cols] view. Read "
    "x[r][j] at x[r * row_stride + j * col_stride]; g and dx are contiguous (g[r * cols + j]).";

// One case's tensors: x (any view), weight and bias (undefined: absent), the upstream gradient
// g (contiguous, x's shape) and whether x is trained (dx asked for).
Case ln_case(std::string label, Tensor x, Tensor w, Tensor b, Tensor g, bool x_trained,
             std::string hint) {
  return {std::move(label), {x, w, b, g}, {x_trained ? 1 : 0}, std::move(hint)};
}

// A weight as training leaves it: around 1, not 1 (so g and g w differ).
Tensor weight(int64_t d) {
  return rand({d}, DType::f32, 0.5, 1.5);
}

// The common case: a random weight and bias (when asked for) and a standard normal g.
Case ln_case(std::string label, Tensor x, bool w, bool b, bool x_trained, std::string hint) {
  const int64_t d = x.size(-1);
  Tensor wt = w ? weight(d) : Tensor();
  Tensor bt = b ? randn({d}) : Tensor();
  Tensor g = randn(x.shape());
  return ln_case(std::move(label), x, wt, bt, g, x_trained, std::move(hint));
}

// `t` as a fresh leaf in dtype `dt`, so each run starts with no gradient. In float32 it is the
// case's own data (detach keeps the strides, so the kernel sees the layout the case was made
// with; nothing writes it); a cast to float64 is a contiguous copy.
Tensor leaf(const Tensor& t, DType dt, bool trained) {
  if (!t.defined()) return Tensor();
  Tensor l = dt == t.dtype() ? t.detach() : t.detach().to(dt);
  if (trained) l.set_requires_grad();
  return l;
}

// layer_norm forward and backward on the case's inputs in dtype `dt`, with whatever variant of
// layer_norm_backward is selected, and the gradients stacked as the header says.
Tensor gradients(const Case& c, DType dt) {
  const Tensor x = leaf(c.inputs[0], dt, c.ints[0] != 0);
  const Tensor w = leaf(c.inputs[1], dt, true);
  const Tensor b = leaf(c.inputs[2], dt, true);
  const Tensor g = c.inputs[3].to(dt);
  layer_norm(x, w, b).backward(g);
  const int64_t d = c.inputs[0].size(-1);
  std::vector<Tensor> parts;
  if (x.requires_grad()) parts.push_back(x.grad().reshape({-1, d}));
  if (w.defined()) parts.push_back(w.grad().reshape({1, d}));
  if (b.defined()) parts.push_back(b.grad().reshape({1, d}));
  return parts.size() == 1 ? parts[0] : concat(parts, 0);
}

// The parts of a case's stacked gradients, each compared on its own scale (compare_parts): dx's
// values are O(1) where dbias sums every row (16411 of them in the last case), so one scale for
// all would hide a dx 47 times too large behind dbias.
std::vector<Part> gradient_parts(const Case& c) {
  const int64_t d = c.inputs[0].size(-1);
  std::vector<Part> parts;
  if (c.ints[0] != 0) parts.push_back({"dx", c.inputs[0].numel() / d});
  if (c.inputs[1].defined()) parts.push_back({"dweight", 1});
  if (c.inputs[2].defined()) parts.push_back({"dbias", 1});
  return parts;
}

// [rows, cols], every row one value, a multiple of 1/4 in [-8, 8] (exact in float32, and so is
// its mean: the forward's mean is the value itself and its variance 0).
Tensor constant_rows(int64_t rows, int64_t cols) {
  std::vector<float> v(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    const float c = std::round(default_generator().uniform() * 64.0 - 32.0) / 4.0f;
    std::fill(v.begin() + r * cols, v.begin() + (r + 1) * cols, c);
  }
  return from_vector(v, {rows, cols});
}

std::vector<Case> cases() {
  return {
      ln_case(
          "[1,7] one row, no weight or bias", randn({1, 7}), false, false, true,
          "dx_j = rstd (g_j - mean_k(g_k) - xhat_j mean_k(g_k xhat_k)), with both means over "
          "the row. Each term comes from one path of x_j into the output (README.md): directly, "
          "through the mean, through the variance. Leave one out and dx is off by O(1)."),
      // A weight of exactly 1 keeps g w = g exact, so dx is exactly 0 whatever the order of the
      // operations (with another weight an FMA may leave g w - round(g w), times rstd = 316).
      ln_case("[7,1] one column, weight 1: xhat = 0, dx = 0", randn({7, 1}), ones({1}), randn({1}),
              randn({7, 1}), true,
              "over one column x - mean = 0, so xhat = 0 and rstd = 1/sqrt(eps) (about 316): dx "
              "is exactly 0 and dbias_j = sum_rows g_j. A mean divides by cols (not cols - 1). "
              "Subtract first: x - mean is exactly 0, x * rstd - mean * rstd is not."),
      ln_case("[13,17] with weight and bias", randn({13, 17}), true, true, true,
              "the normalised x is scaled by the weight before the bias: y = xhat w + b, so the "
              "gradient that reaches xhat is gw = g w. dx's formula uses gw everywhere; dweight = "
              "sum_rows g xhat and dbias = sum_rows g use g alone."),
      ln_case("[9,11] weight, no bias (dbias null)", randn({9, 11}), true, false, true,
              "a null output is not needed: compute only the gradients whose pointer is set."),
      ln_case("[5,9] x not trained: dx null", randn({5, 9}), true, true, false,
              "when x needs no gradient (an input batch) dx is null: write only dweight and "
              "dbias."),
      ln_case("[13,17] x transposed view (col_stride 13)", randn({17, 13}).t(), true, true, true,
              kXStridesHint),
      ln_case("[6,10] x every 2nd column (col_stride 2)", randn({6, 20}).slice(1, 0, 20, 2), true,
              true, true, kXStridesHint),
      ln_case("[2,3,19] 3-d x: 6 rows of 19", randn({2, 3, 19}), true, true, true,
              "layer_norm normalises the last dim; the leading dims merge into rows (here 2 * 3)."),
      ln_case("[61,1031] prime sizes", randn({61, 1031}), true, true, true,
              "sizes that are not multiples of a vector width or a block: check the loops' tails."),
      ln_case("[64,256] x near 10000 (mean 1e4, std 1)", randn({64, 256}) + 10000.0, true, true,
              true,
              "use the saved mean and rstd as given, and form x - mean first: both are near 10000 "
              "and their difference is exact in float32. x * rstd - mean * rstd subtracts two "
              "numbers near 10000, each rounded to a step of 1e-3, and keeps those roundings "
              "instead of the small difference (so would a variance recomputed as E[x^2] - "
              "E[x]^2)."),
      // The extreme of a row: no spread at all.
      ln_case("[6,48] every row constant: variance 0, rstd = 1/sqrt(eps) = 316",
              constant_rows(6, 48), true, true, true,
              "a constant row has x - mean = 0 exactly, so xhat = 0 and rstd = 1/sqrt(0 + eps), "
              "about 316: dx = rstd (gw - mean(gw)) is large but finite. Use the saved rstd: "
              "one recomputed without eps, 1/sqrt(var), is 1/0 = inf, and inf * 0 = NaN."),
      ln_case("[16411,5] long columns, g near 1", randn({16411, 5}), weight(5), randn({5}),
              randn({16411, 5}) + 1.0, true,
              "dweight and dbias sum 16411 rows, and with g near 1 the sums of g grow to about "
              "16411: does every row reach them? A float32 running sum down the rows keeps 24 "
              "bits of its size (measured 3.5e-6 here, inside the tolerance); double column "
              "sums cost little and take that error away."),
  };
}

// ---- more_checks: the float64 reference, checked ----------------------------------------------

std::string error_text(double e) {
  return e == 0 ? "0" : fmt::format("{:.1e}", e);
}

// prism's gradcheck (tensor/autograd/gradcheck.h) of the float64 op on one small odd shape with a
// transposed x, weight and bias: autograd's gradients against central differences. It runs the
// built-in float64 kernels, the same path as the comparison below.
bool check_float64_gradcheck() {
  manual_seed(7);
  std::vector<Tensor> in = {randn({5, 3}, DType::f64), rand({5}, DType::f64, 0.5, 1.5),
                            randn({5}, DType::f64)};
  for (Tensor& t : in) t.set_requires_grad();
  const auto f = [](const std::vector<Tensor>& v) { return layer_norm(v[0].t(), v[1], v[2]); };
  const GradcheckResult r = gradcheck(f, in);
  fmt::print(
      "  float64 gradcheck of layer_norm, [3,5] transposed x, weight, bias  {}  max "
      "error {} against finite differences{}\n",
      r.ok ? "PASS" : "FAIL", error_text(r.max_abs_error), r.ok ? "" : " (" + r.message + ")");
  if (!r.ok) {
    fmt::print(
        "\nhint: prism's own float64 gradient of layer_norm disagrees with finite "
        "differences: the reference is broken, not your kernel. Report it.\n");
  }
  return r.ok;
}

// The learner's float32 gradients against float64 ones from the same float32 inputs. The
// float64 forward keeps its mean and rstd in float64, so this also measures what the float32
// pipeline (saved statistics rounded to float32, float32 arithmetic) costs.
bool check_against_float64(const kernels::KernelEntry& user, uint64_t seed) {
  manual_seed(seed + 1000);
  const std::vector<Case> cs = {
      ln_case("[7,13]", randn({7, 13}), true, true, true, ""),
      ln_case("[13,17] x transposed view", randn({17, 13}).t(), true, true, true, ""),
      ln_case("[37,257] no weight or bias", randn({37, 257}), false, false, true, ""),
  };
  bool ok = true;
  for (const Case& c : cs) {
    Tensor got;
    {
      kernels::Use use("layer_norm_backward", user.name);
      got = gradients(c, DType::f32);
    }
    const Tensor want = gradients(c, DType::f64).to(DType::f32);
    const Comparison cmp = compare_parts(got, want, gradient_parts(c));
    const bool pass = cmp.error <= kTolerance;
    ok = ok && pass;
    fmt::print("  yours (float32) vs float64 autograd, {:<28}  {}  error {}", c.label,
               pass ? "PASS" : "FAIL", error_text(cmp.error));
    if (!pass) {
      fmt::print(" in {} at {}: got {:.7g}, want {:.7g}", cmp.part,
                 index_str(want.shape(), cmp.worst), cmp.got, cmp.want);
    }
    fmt::print("\n");
  }
  if (!ok) {
    fmt::print(
        "\nhint: your kernel agrees with the naive variant on every case but not with "
        "float64 autograd on these inputs; the line names the gradient (dx, dweight or dbias) "
        "the worst error is in.\n");
  }
  return ok;
}

bool more_checks(const kernels::KernelEntry& user, const Options& o) {
  fmt::print("\nthe float64 reference (tolerance {} for float32 against it):\n",
             error_text(kTolerance));
  const bool checked = check_float64_gradcheck();
  return check_against_float64(user, o.seed) && checked;
}

// ---- tiers -----------------------------------------------------------------------------------

const char* const kTier1 =
    "walk the rows, not the columns: for each row, one pass for its two sums (sum gw, sum gw "
    "xhat) and a second that writes dx, adding g xhat and g into dweight and dbias as you go. "
    "naive sums each column of dweight and dbias down all the rows, a stride of cols floats per "
    "step.";
const char* const kTier2 =
    "keep every inner loop over j free of branches (decide weight / no weight, col_stride 1 or "
    "not, outside it) so it vectorises; accumulate each row's two sums in float with several "
    "lanes (#pragma omp simd reduction) and the column sums in a double array added row by row.";

Exercise make_exercise() {
  Exercise ex;
  ex.id = "07_layer_norm_backward";
  ex.file = "exercises/07_layer_norm_backward/layer_norm_backward.cpp";
  ex.op = "layer_norm_backward";
  ex.title =
      "the gradient of layer_norm, by hand: dx, dweight, dbias (LayerNormBackwardArgs); "
      "stacked as one [rows + 2, cols] tensor (dx rows, then dweight, then dbias), each "
      "compared on its own scale";
  ex.tolerance = kTolerance;
  ex.tolerance_why =
      "naive sums in double; float32 row and column sums in another order differ by a few 1e-7 "
      "of the largest gradient (prism's fused kernel: up to 5e-6 on 16384 rows); a missing term "
      "is off by O(1)";
  ex.arm_guard = &Guard<LayerNormBackwardArgs>::arm;
  ex.call = [](const Case& c) { return gradients(c, DType::f32); };
  ex.parts = gradient_parts;
  ex.cases = cases;
  ex.quick_timing_sizes = {"256x768"};
  // A GPT-2 small batch (768 columns, 12 MB per [rows, cols] tensor: past L2) and many short rows.
  ex.timing_sizes = {"4096x768", "16384x128"};
  ex.tiers = {{"beats naive", "naive", 1.0, kTier1},
              {"within 1.5x of prism's fused kernel", "fused", 1.5, kTier2}};
  ex.more_checks = more_checks;
  return ex;
}

}  // namespace

static const bool registered = add_exercise(make_exercise());

}  // namespace prism::exercises
