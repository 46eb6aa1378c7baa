// Exercise 08, the checks: linear + GELU, fused (README.md, next to this file).
//
// Each case calls the tensor op linear_gelu(x, W, b) with the learner's kernel selected, as
// prism does, and compares y with the `unfused` variant's (GEMM, bias pass, GELU pass). A case
// marked "z requested" makes W require a gradient, so the front end hands the kernel a z
// buffer for the pre-activation; the checker then compares y and z side by side (the call
// returns [y | z], [rows, 2 out]), and the guarded run reports a z never written.
//
// Inputs: x ~ N(0, 1), W ~ N(0, 1/in) (a Linear layer's usual scale), b ~ N(0, 0.25), so that
// z ~ N(0, 1.25) whatever `in` is: the outputs sit on GELU's curved part, where its tanh form
// and its exact erf form differ by up to 4.7e-4, rather than in the straight parts, where
// every GELU gives 0 or v.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "exercises/checker/checker.h"
#include "tensor/autograd/node.h"
#include "tensor/ops.h"
#include "kernels/ops/linear_gelu/args.h"

namespace prism::exercises {
namespace {

using kernels::LinearGeluArgs;

constexpr int kWantZ = 1;  // Case::ints[0]: give the kernel a z buffer

Tensor weight(int64_t out, int64_t in) {
  return randn({out, in}) * (1.0 / std::sqrt(static_cast<double>(in)));
}

Tensor bias(int64_t out) {
  return randn({out}) * 0.5;
}

// A case on contiguous x [rows, in], W [out, in], with or without bias and z.
Case dense(std::string label, int64_t rows, int64_t in, int64_t out, bool with_bias, bool want_z,
           std::string hint) {
  return {std::move(label),
          {randn({rows, in}), weight(out, in), with_bias ? bias(out) : Tensor()},
          {want_z ? kWantZ : 0},
          std::move(hint)};
}

// b[c] from -r to r over the outputs, x small: z runs over [-r, r] (GELU's whole curved part
// for r = 6; its flat and straight parts too for larger r).
Tensor ramp(int64_t out, float r = 6.0f) {
  std::vector<float> v(static_cast<size_t>(out));
  for (int64_t c = 0; c < out; ++c) v[static_cast<size_t>(c)] = -r + 2.0f * r * c / (out - 1);
  return from_vector(v, {out});
}

// linear_gelu(x, W, b); with z requested, [y | z] side by side. W requiring a gradient is what
// makes the front end keep z: it saves it in the op's autograd node, input 2 of what it saved.
Tensor call_linear_gelu(const Case& c) {
  const Tensor& x = c.inputs[0];
  const Tensor& b = c.inputs[2];
  if (c.ints.empty() || c.ints[0] != kWantZ) return linear_gelu(x, c.inputs[1], b);
  Tensor w = c.inputs[1].detach();
  w.set_requires_grad();
  const Tensor y = linear_gelu(x, w, b);
  const Tensor& z = y.grad_fn()->saved(2).tensor();
  if (!z.defined() || z.shape() != y.shape()) {
    throw Error("linear_gelu kept no pre-activation z: the checker cannot check it");
  }
  return concat({y.detach(), z.detach()}, 1);
}

std::vector<Case> linear_gelu_cases() {
  const std::string view_hint =
      "x and W can be views: x[r][p] is x[r * x_rs + p * x_cs] and W[c][p] is "
      "weight[c * w_rs + p * w_cs]. matmul_block passes both sets of strides on to the matmul "
      "kernel; any code of your own that reads x or W must use them too.";
  const std::string z_hint =
      "a.z is not null: the op will be differentiated, and backward needs gelu'(z). Write the "
      "pre-activation z = x W^T + b (bias included, GELU not applied) to a.z, as well as y. "
      "Here the checker compares [y | z] side by side: a column index >= out is in z.";
  const std::string formula_hint =
      "check the formula: y = gelu(x W^T + b), the bias inside the GELU (an error of order 0.1 "
      "is often gelu(x W^T) + b), and GELU's tanh form, 0.5 v (1 + tanh(sqrt(2/pi) (v + "
      "0.044715 v^3))) (an error of about 1e-4 is the exact erf form, 0.5 v (1 + erf(v / "
      "sqrt 2))).";
  const std::string no_bias_hint = "a.bias is null: there is no bias, add nothing.";
  const std::string edge_hint =
      "these sizes are not multiples of a tile, so the last tile in each direction is smaller "
      "(nr = min(T, rows - r0), nc = min(T, out - c0)): compute, add the bias to and store "
      "exactly its real rows and columns, and do not skip it.";
  return {
      dense("x [1,1] W [1,1]", 1, 1, 1, true, false, formula_hint),
      dense("x [1,13] W [7,13]", 1, 13, 7, true, false, formula_hint),
      dense("x [7,13] W [5,13] no bias", 7, 13, 5, false, false, no_bias_hint),
      dense("x [13,17] W [19,17]", 13, 17, 19, true, false,
            "rows, in and out all differ: y is rows x out, so its row length is out. If the "
            "error is small (1e-4), " +
                formula_hint),
      {"x [13,17] transposed view, W [19,17]",
       {randn({17, 13}).t(), weight(19, 17), bias(19)},
       {0},
       view_hint},
      {"x [13,17], W [19,17] transposed view",
       {randn({13, 17}), (randn({17, 19}) * (1.0 / std::sqrt(17.0))).t(), bias(19)},
       {0},
       view_hint},
      {"x [20,15] every 2nd column, W [9,15]",
       {randn({20, 30}).slice(1, 0, 30, 2), weight(9, 15), bias(9)},
       {0},
       view_hint},
      dense("z requested: x [13,17] W [19,17]", 13, 17, 19, true, true, z_hint),
      dense("z requested, no bias: x [5,9] W [11,9]", 5, 9, 11, false, true, z_hint),
      dense("x [257,129] W [263,129] (partial tiles)", 257, 129, 263, true, false, edge_hint),
      dense("z requested: x [300,64] W [520,64] (partial tiles)", 300, 64, 520, true, true,
            edge_hint),
      {"x [8,64] W [512,64], bias from -6 to 6 (GELU's curve)",
       {randn({8, 64}) * 0.1, weight(512, 64), ramp(512)},
       {0},
       "z runs from -6 to 6 here, across GELU's whole curved part. prism's GELU is the tanh "
       "approximation, 0.5 v (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3))); the exact GELU, "
       "0.5 v (1 + erf(v / sqrt 2)), differs from it by up to 4.7e-4 (at |v| = 2.7), well past "
       "the tolerance. Use the tanh form."},
      dense("x [31,520] W [33,520] (long in)", 31, 520, 33, true, false, ""),
      // The extremes of the pre-activation, with the mistake they catch.
      {"x [8,64] W [400,64], bias from -100 to 100 (GELU's flat and straight parts)",
       {randn({8, 64}) * 0.1, weight(400, 64), ramp(400, 100.0f)},
       {0},
       "past |v| = 10 GELU is 0 on the left and v on the right, and u = sqrt(2/pi) (v + 0.044715 "
       "v^3) reaches 3.6e4 at v = 100: exp(2u) overflows float32 to inf once u > 44 (v > 10), "
       "and a tanh u written as (e - 1) / (e + 1) is then inf / inf = NaN. Use a form that "
       "goes to its limit when the exp is inf or 0: 0.5 (1 + tanh u) = 1 / (1 + exp(-2u)), or "
       "tanh u = 1 - 2 / (exp(2u) + 1)."},
  };
}

const char* const kTier1 =
    "tile the output (e.g. 256 x 256) so the matmul kernel still gets blocks large enough to "
    "run at speed, and keep the epilogue's inner loop a plain loop over a tile row: bias add, "
    "a copy to z, GELU.";
const char* const kTier2 =
    "the GELU is now most of the time: with libm's tanhf it costs about 19 ns per element "
    "here, and a loop that calls tanhf cannot be vectorised. Write GELU with a vectorisable "
    "exp instead: 0.5 (1 + tanh u) = 1 / (1 + exp(-2u)), so gelu(v) = v / (1 + exp(-2u)), "
    "with kernels/cpu/fast_exp.h's fast_exp (or exercise 09's tanh).";

Exercise make_linear_gelu_fused() {
  Exercise e;
  e.id = "08_linear_gelu_fused";
  e.file = "exercises/08_linear_gelu_fused/linear_gelu_fused.cpp";
  e.op = "linear_gelu";
  e.title =
      "y = gelu(x W^T + b) with the bias and GELU applied to each tile of the product while it "
      "is in cache (LinearGeluArgs)";
  e.tolerance = 1e-5;
  e.tolerance_why =
      "relative to the largest output: the product's sums of up to 520 terms in another order "
      "differ by about 1e-6 of it, and a GELU from a vectorised exp within a few ulps adds less; "
      "GELU's exact erf form is off by 7.6e-5 or more on the cases it fails";
  e.arm_guard = &Guard<LinearGeluArgs>::arm;
  e.call = call_linear_gelu;
  e.cases = linear_gelu_cases;
  // The lab's linear_gelu sizes (rows x in x out; bias and z always on, as in training): an
  // MLP layer whose output fits L2 (128 KB), a transformer MLP's first layer (y and z 12 MB
  // each, past L2), and a short product (in = 256), where the epilogue weighs the most.
  e.quick_timing_sizes = {"128x784x256"};
  e.timing_sizes = {"128x784x256", "1024x768x3072", "4096x256x1024"};
  e.tiers = {{"as fast as unfused", "unfused", 1.10, kTier1},
             {"1.5x faster than the best built-in", "best", 0.67, kTier2}};
  return e;
}

}  // namespace

static const bool registered = add_exercise(make_linear_gelu_fused());

}  // namespace prism::exercises
