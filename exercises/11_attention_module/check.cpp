// Exercise 11's checks: the learner's attention module (make_my_attention, attention_module.h)
// against prism's nn::MultiHeadAttention with the same weights.
//
// For each case both modules are built with the case's (d_model, heads, causal); the built-in
// one's parameters are copied into the learner's by name (qkv.weight, qkv.bias, proj.weight,
// proj.bias; a missing or misshapen one fails the case, naming it). Both run forward on the same
// input x and backward from loss = sum(out * R), R a fixed random tensor of out's shape (so
// dloss/dout = R: every output element gets its own random weight, and a mistake that moves
// values between positions shows in the gradients too). Compared with compare.h's error: the
// output, the input's gradient and every parameter's gradient. The learner's forward and
// backward run inside a profiler session: a module that calls the fused `attention` op (what the
// built-in layer uses) is refused, since the exercise is to compose it.
//
// No speed tiers (README, "Performance tiers"): prism has no routine that times an arbitrary
// closure (the kernel lab times one registry op's kernels on raw buffers; prism bench's loop
// times whole models and is private to analysis/model_bench.cpp), and one timing method is the
// rule. What the checker prints instead, once every case passes, is the memory each module
// holds at its peak (profiler/memory.h): exact counts, not timings.
#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include "exercises/11_attention_module/attention_module.h"
#include "exercises/checker/checker.h"
#include "exercises/checker/compare.h"
#include "nn/layers/attention.h"
#include "profiler/memory.h"
#include "profiler/session.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/ops.h"
#include "tensor/random.h"

namespace prism::exercises {
namespace {

// float32, and the two modules sum in different orders: the built-in op runs the flash variant
// (tiles of keys with an online softmax, its own backward that rebuilds the probabilities from
// the saved log-sum-exp), the learner's module a plain matmul, softmax, matmul chain. Each
// output is a sum of at most 3 D + T terms of float32 products (the projections and the weighted
// sum over the keys); at the sizes here (D <= 32, T <= 64) the solution's largest error over
// seeds 1 to 20 was 4.7e-7 (README). 1e-4 leaves two orders of magnitude for other correct orders
// of summation, while every mistake the wrong/ files make is off by 1e-2 or more.
constexpr double kTolerance = 1e-4;
constexpr const char* kToleranceWhy =
    "float32, summed in another order than the fused op (its largest error for the solution is "
    "below 1e-6; a mistake is off by 1e-2 or more)";

struct AttnCase {
  std::string label;
  int64_t batch;  // 0: unbatched input [T, D]
  int64_t seq, d_model, heads;
  bool causal;
  std::string hint;  // what this case is there to catch
};

std::vector<AttnCase> attention_cases() {
  const std::string heads_hint =
      "several heads. Each head uses its own d = d_model / heads features of q, k and v: check "
      "the scale (1/sqrt(d), the head size, not d_model) and the split into heads (the last "
      "dim of qkv is (q/k/v, head, feature): view it as [B, T, 3, H, d], then permute the "
      "heads before the tokens; a reshape straight to [B, H, T, d] mixes tokens and heads).";
  const std::string causal_hint =
      "a causal mask on a longer sequence: token i sees tokens 0..i, itself included, so the "
      "mask is -inf where j > i exactly (not j >= i, not j > i + 1).";
  return {
      {"batch 1, seq 1, 1 head, d_model 4", 1, 1, 4, 1, false,
       "the smallest layer: one token, whose softmax is 1, so y = proj(v). Check the qkv split "
       "(q, k, v are the first, second and third D features of qkv) and the output projection."},
      {"batch 1, seq 1, causal, d_model 6, 2 heads", 1, 1, 6, 2, true,
       "one token with the causal mask: it must still see itself. A mask that also hides the "
       "diagonal (j >= i) leaves token 0 with nothing to attend to: a softmax of only -inf is "
       "NaN."},
      {"seq 7, 1 head, d_model 6", 1, 7, 6, 1, false,
       "one head and several tokens: the softmax is over the keys j (the last dim of S = q k^T, "
       "[.., T_query, T_key]), so each query's weights sum to 1."},
      {"batch 2, seq 5, d_model 8, 2 heads", 2, 5, 8, 2, false, heads_hint},
      {"prime seq 13, causal, d_model 12, 3 heads", 1, 13, 12, 3, true, causal_hint},
      {"batch 3, seq 11, causal, d_model 15, 3 heads (d_head 5, odd)", 3, 11, 15, 3, true,
       heads_hint},
      {"batch 2, seq 17, d_model 21, 7 heads (d_head 3)", 2, 17, 21, 7, false, heads_hint},
      {"unbatched [9,10], 2 heads, causal", 0, 9, 10, 2, true,
       "an input of shape [T, D], one sequence without a batch dim, as the built-in layer "
       "accepts: add the dim (unsqueeze(0)) and take it off the result (squeeze(0))."},
      {"batch 2, seq 64, causal, d_model 32, 4 heads", 2, 64, 32, 4, true,
       "a longer sequence: the built-in op works in tiles of 64 keys; every row of yours must "
       "match."},
  };
}

// "" when `mine` has exactly the built-in layer's parameters (names and shapes), else what
// differs.
std::string parameter_mismatch(const nn::Module& mine, const nn::Module& builtin) {
  std::map<std::string, Dims> want, got;
  for (const auto& [name, t] : builtin.named_parameters()) want[name] = t.shape();
  for (const auto& [name, t] : mine.named_parameters()) got[name] = t.shape();
  std::vector<std::string> problems;
  for (const auto& [name, shape] : want) {
    const auto it = got.find(name);
    if (it == got.end()) {
      problems.push_back("missing " + name + " " + shape.str());
    } else if (it->second != shape) {
      problems.push_back(name + " is " + it->second.str() + ", want " + shape.str());
    }
  }
  for (const auto& [name, shape] : got) {
    if (!want.count(name)) problems.push_back("unexpected " + name + " " + shape.str());
  }
  std::string s;
  for (const std::string& p : problems) s += (s.empty() ? "" : "; ") + p;
  return s;
}

// One module's forward and backward: out, the input's gradient, each parameter's gradient.
struct Pass {
  Tensor out, dx;
  std::vector<std::pair<std::string, Tensor>> grads;
  bool called_attention = false;  // the profile holds an `attention` op
};

Pass forward_backward(nn::Module& m, const Tensor& x0, const Tensor& r_for, bool profile) {
  Pass p;
  Tensor x = x0.detach().clone();
  x.set_requires_grad();
  auto run = [&] {
    p.out = m(x);
    // loss = sum(out * R): dloss/dout = R. R is made for out's shape; a wrong shape is caught
    // before this (the caller compares shapes first).
    sum(p.out * r_for).backward();
  };
  if (profile) {
    profiler::Session session;
    run();
    for (const auto& rec : session.stop().recording.records) {
      if (rec.kind == profiler::Kind::op && std::string(rec.op) == "attention") {
        p.called_attention = true;
      }
    }
  } else {
    run();
  }
  p.dx = x.grad();
  for (const auto& [name, t] : m.named_parameters()) p.grads.emplace_back(name, t.grad());
  return p;
}

struct CaseResult {
  bool ok = false;
  std::string detail;
  std::string hint;  // what the failure means
  // A wrong value: the case's own hint (what it is there to catch) is added after `hint`.
  bool case_matters = false;
};

std::string err_str(double e) {
  return e == 0 ? "0" : fmt::format("{:.1e}", e);
}

// The worst of the gradient comparisons, "" when all are within tolerance; `worst` gets the
// largest error seen.
std::string compare_grads(const Pass& mine, const Pass& ref, double& worst) {
  std::vector<std::pair<std::string, std::pair<Tensor, Tensor>>> pairs;
  pairs.push_back({"the input x", {mine.dx, ref.dx}});
  std::map<std::string, Tensor> mine_grads(mine.grads.begin(), mine.grads.end());
  for (const auto& [name, g] : ref.grads) pairs.push_back({name, {mine_grads[name], g}});
  std::string bad;
  double bad_error = -1;
  for (const auto& [name, gw] : pairs) {
    const auto& [got, want] = gw;
    if (!got.defined()) {
      return "no gradient reached " + name +
             " (is it used in forward? was the graph cut by "
             "detach or a copy through data<float>()?)";
    }
    const Comparison c = compare(got, want);
    worst = std::max(worst, c.error);
    if (c.error > kTolerance && c.error > bad_error) {
      bad_error = c.error;
      bad = fmt::format("gradient of {} error {} at {}: got {:.7g}, want {:.7g}", name,
                        err_str(c.error), index_str(want.shape(), c.worst), c.got, c.want);
    }
  }
  return bad;
}

CaseResult check_case(const AttnCase& c) {
  CaseResult r;
  const Dims shape = c.batch > 0 ? Dims{c.batch, c.seq, c.d_model} : Dims{c.seq, c.d_model};
  nn::MultiHeadAttention builtin(c.d_model, c.heads, c.causal);
  const Tensor x = randn(shape);
  const Tensor weights = randn(shape);  // R: the output has the input's shape
  std::shared_ptr<nn::Module> mine;
  try {
    mine = make_my_attention(c.d_model, c.heads, c.causal);
    if (!mine) throw Error("make_my_attention returned no module");
  } catch (const std::exception& e) {
    r.detail = std::string("make_my_attention threw: ") + e.what();
    r.hint =
        "Building your module threw an error. The constructor must accept any d_model that "
        "is a positive multiple of heads.";
    return r;
  }
  const std::string mismatch = parameter_mismatch(*mine, builtin);
  if (!mismatch.empty()) {
    r.detail = "parameters: " + mismatch;
    r.hint =
        "Your module's parameters are not the built-in layer's, so the checker cannot give "
        "both the same weights. Register two Linear children named \"qkv\" (d_model -> 3 "
        "d_model) and \"proj\" (d_model -> d_model), with biases, as the stub does "
        "(README, \"The task\").";
    return r;
  }
  {
    NoGrad no_grad;
    const nn::NamedTensors src = builtin.named_parameters();
    std::map<std::string, Tensor> dst;
    for (const auto& [name, t] : mine->named_parameters()) dst[name] = t;
    for (const auto& [name, t] : src) nn::assign(dst[name], t);
  }
  const Pass ref = forward_backward(builtin, x, weights, false);
  Pass got;
  try {
    got = forward_backward(*mine, x, weights, true);
  } catch (const std::exception& e) {
    r.detail = std::string("threw: ") + e.what();
    r.hint =
        "Your module threw while running forward or backward. The message says which op "
        "refused which shapes; print the shapes of q, k, v and S as you go.";
    return r;
  }
  if (got.called_attention) {
    r.detail = "calls prism::attention, the fused op";
    r.hint =
        "Your module calls the fused attention op, which is what it is compared with. "
        "Compose it from matmul, the mask, softmax and matmul (the stub's top comment).";
    return r;
  }
  if (got.out.shape() != ref.out.shape() || got.out.dtype() != DType::f32) {
    r.detail = "output " + got.out.shape().str() + ", want " + ref.out.shape().str() + " float32";
    r.hint = "The output must have the input's shape: [B, T, D] for [B, T, D], [T, D] for [T, D].";
    return r;
  }
  const Comparison out = compare(got.out, ref.out);
  if (!(out.error <= kTolerance)) {
    r.detail = fmt::format("output error {} at {}: got {:.7g}, want {:.7g}", err_str(out.error),
                           index_str(ref.out.shape(), out.worst), got.out.to_vector()[out.worst],
                           ref.out.to_vector()[out.worst]);
    r.hint = fmt::format("The output differs from nn::MultiHeadAttention's by {} (tolerance {}).",
                         err_str(out.error), err_str(kTolerance));
    r.case_matters = true;
    return r;
  }
  double worst = out.error;
  const std::string grads = compare_grads(got, ref, worst);
  if (!grads.empty()) {
    r.detail = grads;
    r.hint =
        "The output matches but a gradient does not: autograd differentiates the ops you "
        "call, so look for a value computed outside the graph (a tensor rebuilt from "
        "to_vector() or data<float>(), a detach) or a parameter left unused.";
    r.case_matters = true;
    return r;
  }
  r.ok = true;
  r.detail = fmt::format("output and gradients (x, {} parameters) within {}; largest error {}",
                         ref.grads.size(), err_str(kTolerance), err_str(worst));
  return r;
}

// The peak memory (profiler/memory.h, cpu) that a forward and backward of `m` adds: what it
// holds for backward plus its largest temporaries, in bytes.
int64_t peak_bytes(nn::Module& m, const Tensor& x, const Tensor& weights) {
  const int64_t before = profiler::memory_stats(0).live_bytes;
  profiler::reset_peak(0);
  forward_backward(m, x, weights, false);
  return profiler::memory_stats(0).peak_bytes - before;
}

// Once every case passed: both modules' peak memory on a sequence long enough for the scores
// to matter. Exact counts of tracked bytes (not timings), not graded.
void print_memory(const Options& o) {
  const int64_t b = 2, t = 256, d_model = 32, heads = 4;
  manual_seed(o.seed);
  nn::MultiHeadAttention builtin(d_model, heads, true);
  std::shared_ptr<nn::Module> mine = make_my_attention(d_model, heads, true);
  const Tensor x = randn({b, t, d_model}), weights = randn({b, t, d_model});
  const int64_t theirs = peak_bytes(builtin, x, weights);
  const int64_t yours = peak_bytes(*mine, x, weights);
  const double scores_kib = static_cast<double>(b * heads * t * t * 4) / 1024;
  fmt::print(
      "\nmemory (not graded): forward + backward at [{},{},{}], {} heads, causal, peak tracked "
      "bytes above the inputs:\n  yours {:.0f} KiB, nn::MultiHeadAttention {:.0f} KiB (one "
      "[B,H,T,T] float32 tensor of scores is {:.0f} KiB; the fused op keeps none)\n",
      b, t, d_model, heads, static_cast<double>(yours) / 1024, static_cast<double>(theirs) / 1024,
      scores_kib);
}

Outcome run_attention(const Options& o) {
  fmt::print(
      "\nyour make_my_attention against nn::MultiHeadAttention (the fused attention op), "
      "same weights, float32; loss = sum(out * R) for the gradients; tolerance {}: {}\n",
      err_str(kTolerance), kToleranceWhy);
  manual_seed(o.seed);
  const std::vector<AttnCase> cases = attention_cases();
  size_t width = 0;
  for (const AttnCase& c : cases) width = std::max(width, c.label.size());
  int passed = 0;
  std::string first_hint;
  for (const AttnCase& c : cases) {
    // The label goes out before the case runs: if the module crashes, the last line says where.
    fmt::print("  {:<{}}  ", c.label, width);
    std::fflush(stdout);
    note_step(o, "case " + c.label);
    const CaseResult r = check_case(c);
    passed += r.ok;
    fmt::print("{}  {}\n", r.ok ? "PASS" : "FAIL", r.detail);
    if (!r.ok && first_hint.empty()) {
      first_hint = "hint (" + c.label + "): " + r.hint;
      if (r.case_matters) first_hint += "\nThis case: " + c.hint;
    }
  }
  const int n = static_cast<int>(cases.size());
  fmt::print("{} of {} cases passed.\n", passed, n);
  if (passed < n) {
    fmt::print("\n{}\n", first_hint);
    return {1, 0, 0};
  }
  try {
    print_memory(o);
  } catch (const std::exception& e) {
    fmt::print("\nmemory (not graded): not measured, your module threw at [2,256,32]: {}\n",
               e.what());
  }
  return {0, 0, 0};
}

Exercise make_attention_module() {
  Exercise ex;
  ex.id = "11_attention_module";
  ex.file = "exercises/11_attention_module/attention_module.cpp";
  ex.title = "multi-head self-attention as a module, from matmul, softmax and views";
  ex.tolerance = kTolerance;
  ex.tolerance_why = kToleranceWhy;
  ex.run = run_attention;
  return ex;
}

static const bool registered = add_exercise(make_attention_module());

}  // namespace
}  // namespace prism::exercises
