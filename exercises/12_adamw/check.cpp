// Exercise 12's checks: one AdamW step (op adam_update), in place (README.md has the math).
//
// Not the kernel-exercise path of checker.h, for two reasons. The update is in place: param, m
// and v are inputs and outputs at once, so the guard zones of guard.h, which fill an output
// with NaN before the call, have nothing to fill (the old values are the inputs). And the
// comparison is with the `fused` variant, prism's default, where the kernel path compares with
// a variant named `reference` or `naive`, which adam_update does not have. So this file sets
// `run` and does the same steps itself:
//   1. single steps: each case's buffers go to the learner's kernel and to `fused` through the
//      front end (adam_update_, with kernels::Use), and param, m and v are compared (compare.h).
//      Each buffer sits inside a larger one whose ends hold a sentinel, checked after the call:
//      the one guard an in-place buffer can have (a write outside it);
//   2. a trajectory: 20 steps from the same start with a sequence of gradients, the learner's
//      float32 kernel (through the front end, which computes the bias corrections from t)
//      against the AdamW formulas evaluated here in float64, step t = 1 .. 20;
//   3. the timing and tiers of every kernel exercise (checker.h, time_and_grade).
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "exercises/checker/checker.h"
#include "exercises/checker/compare.h"
#include "kernels/registry.h"
#include "tensor/ops.h"
#include "tensor/optim_ops.h"
#include "tensor/random.h"
#include "kernels/ops/optim/args.h"

namespace prism::exercises {
namespace {

constexpr const char* kOp = "adam_update";
constexpr const char* kYardstick = "fused";
constexpr double kStepTolerance = 1e-6;
constexpr double kTrajectoryTolerance = 1e-5;

std::string error_text(double e) {
  if (e == 0) return "0";
  if (std::isinf(e)) return "inf";
  return fmt::format("{:.1e}", e);
}

// ---- one step ----------------------------------------------------------------------------------

// One single-step case: n parameters and the hyperparameters, with the state either zero (the
// first step) or as earlier steps leave it, and gradients of size `grad_scale`.
struct StepCase {
  std::string label;
  int64_t n;
  AdamHyper h;
  bool zero_state;
  double grad_scale;
  int zero_every;  // every zero_every-th gradient is exactly 0 (0: none)
  std::string hint;
};

struct StepInputs {
  Tensor p, g, m, v;
};

StepInputs make_inputs(const StepCase& c) {
  StepInputs in;
  in.p = randn({c.n});
  std::vector<float> g = (randn({c.n}) * c.grad_scale).to_vector<float>();
  for (size_t i = 0; i < g.size(); ++i) {
    if (c.zero_every > 0 && i % static_cast<size_t>(c.zero_every) == 0) g[i] = 0;
  }
  in.g = from_vector(g, {c.n});
  if (c.zero_state) {
    in.m = zeros({c.n});
    in.v = zeros({c.n});
  } else {
    // As a few earlier steps leave them: m near (1 - b1^t) times the gradients' mean, v near
    // (1 - b2^t) times their square; non-negative, as v always is.
    in.m = randn({c.n}) * (0.1 * c.grad_scale);
    in.v = rand({c.n}, DType::f32, 0, 0.02 * c.grad_scale * c.grad_scale);
  }
  return in;
}

// A buffer inside a larger one whose kPad elements on each side hold a sentinel bit pattern (a
// NaN no arithmetic produces): after the call, a changed sentinel is a write outside the buffer.
constexpr int64_t kPad = 4096;
constexpr uint32_t kSentinel = 0x7fa5a5a5u;

struct Padded {
  Tensor base, view;

  explicit Padded(const Tensor& values) {
    const int64_t n = values.numel();
    float s;
    std::memcpy(&s, &kSentinel, sizeof s);
    base = full({n + 2 * kPad}, 0.0);
    float* b = base.data<float>();
    for (int64_t i = 0; i < n + 2 * kPad; ++i) b[i] = s;
    std::memcpy(b + kPad, values.contiguous().data<float>(), static_cast<size_t>(n) * sizeof s);
    view = base.narrow(0, kPad, n);  // contiguous, as adam_update_ requires
  }

  // "" when both sentinel zones are intact, else what was written where.
  std::string outside(const char* name) const {
    const float* b = base.data<float>();
    const int64_t n = view.numel();
    int64_t before = 0, after = 0;
    for (int64_t i = 0; i < kPad; ++i) {
      uint32_t lo, hi;
      std::memcpy(&lo, b + i, sizeof lo);
      std::memcpy(&hi, b + kPad + n + i, sizeof hi);
      before += lo != kSentinel;
      after += hi != kSentinel;
    }
    if (before + after == 0) return "";
    return fmt::format("wrote {} element(s) before {} and {} past its end ({} has {})", before,
                       name, after, name, n);
  }
};

struct StepResult {
  Tensor p, m, v;
  std::string outside;  // a write outside param, m or v; "" if none
};

// One step of `variant` on copies of the case's buffers, through the front end.
StepResult run_step(const std::string& variant, const StepInputs& in, const AdamHyper& h) {
  Padded p(in.p), m(in.m), v(in.v);
  {
    kernels::Use use(kOp, variant);
    adam_update_(p.view, in.g, m.view, v.view, h);
  }
  StepResult r{p.view.clone(), m.view.clone(), v.view.clone(), ""};
  const std::pair<const Padded*, const char*> buffers[] = {{&p, "param"}, {&m, "m"}, {&v, "v"}};
  for (const auto& [buf, name] : buffers) {
    const std::string o = buf->outside(name);
    if (!o.empty() && r.outside.empty()) r.outside = o;
  }
  return r;
}

// The largest compare.h error over param, m and v, and where.
struct StepComparison {
  Comparison cmp;
  std::string buffer;
};

StepComparison compare_step(const StepResult& got, const StepResult& want) {
  StepComparison worst{{-1, -1, 0, 0, ""}, ""};
  const std::tuple<const Tensor*, const Tensor*, const char*> buffers[] = {
      {&got.p, &want.p, "param"}, {&got.m, &want.m, "m"}, {&got.v, &want.v, "v"}};
  for (const auto& [g, w, name] : buffers) {
    const Comparison c = compare(*g, *w);
    if (c.error > worst.cmp.error) worst = {c, name};
  }
  return worst;
}

AdamHyper hyper(double lr, double wd, bool decoupled, int64_t step) {
  AdamHyper h;
  h.lr = lr;
  h.beta1 = 0.9;
  h.beta2 = 0.999;
  h.eps = 1e-8;
  h.weight_decay = wd;
  h.decoupled = decoupled;
  h.step = step;
  return h;
}

std::vector<StepCase> step_cases() {
  const std::string first =
      "at step 1 from m = v = 0, m = (1 - b1) g and v = (1 - b2) g^2 are 10 and 1000 times too "
      "small: divide m by bias_correction1 and v by bias_correction2 (sqrt(v) by its square "
      "root), so the first step is about lr in size. And update m and v with this step's "
      "gradient before the step uses them.";
  return {
      {"[1] step 1 from m = v = 0", 1, hyper(1e-3, 0, true, 1), true, 1, 0, first},
      {"[7] step 10: bias corrections 0.65 and 0.01", 7, hyper(1e-3, 0, true, 10), false, 1, 0,
       "bias_correction1 = 1 - b1^t and bias_correction2 = 1 - b2^t, given in the args: the "
       "step is lr m_hat / (sqrt(v_hat) + eps) with m_hat = m / bias_correction1 and v_hat = v / "
       "bias_correction2."},
      {"[33] every third gradient 0, from m = v = 0", 33, hyper(1e-3, 0, true, 1), true, 1, 3,
       "where g = 0 at the first step, m = v = 0 and the step is 0 / (0 + eps) = 0: eps keeps "
       "the division finite. Divide by (sqrt(v_hat) + eps), never multiply by 1 / sqrt(v_hat)."},
      {"[4099] AdamW: weight decay 0.1, lr 0.01", 4099, hyper(1e-2, 0.1, true, 5), false, 1, 0,
       "AdamW (decoupled true) shrinks the weight itself, p = p (1 - lr wd), before the step, "
       "and the gradient enters m and v as it is."},
      {"[4099] Adam with L2: weight decay 0.1, decoupled false", 4099, hyper(1e-2, 0.1, false, 5),
       false, 1, 0,
       "decoupled false is Adam with an L2 penalty: g = grad + wd p goes into m and v, and the "
       "weight is not shrunk separately."},
      {"[4099] tiny gradients (|g| near 1e-5): eps matters", 4099, hyper(1e-3, 0.01, true, 5),
       false, 1e-5, 0,
       "eps is added outside the square root: sqrt(v) / sqrt(bias_correction2) + eps. With "
       "gradients near 1e-5, sqrt(v_hat) is near 1e-5 as well, and sqrt(v_hat + eps) would be "
       "near 1e-4: a step 10 times too small."},
      {"[65537] AdamW, step 100", 65537, hyper(1e-3, 0.01, true, 100), false, 1, 0, ""},
      {"[1000003] AdamW, step 3", 1000003, hyper(1e-3, 0.01, true, 3), false, 1, 0,
       "a large tensor: check the loop runs over all a.numel elements."},
  };
}

// ---- the usual mistakes ------------------------------------------------------------------------

// A hint names a cause only when the kernel's output shows it: for a failed case, the step is
// computed here in float64 the right way and with each usual mistake, on the same inputs, and a
// mistake is named when the kernel's param, m and v match its step (within kMatchTolerance) and
// not the right one. Otherwise the checker reports what differs and where, and names no cause.
enum class Mistake {
  none,
  l2_for_adamw,        // decoupled asked: wd p added to the gradient instead
  decoupled_for_l2,    // L2 asked: the weight shrunk instead
  decay_after_step,    // decoupled: p (1 - lr wd) applied to the stepped weight
  no_decay,            // weight_decay ignored
  no_bias_correction,  // m and v used as they are
  eps_inside_sqrt,     // sqrt(v_hat + eps)
  moments_after_step,  // the step uses m and v from before this gradient
};

struct MistakeText {
  Mistake mistake;
  const char* what;  // what the kernel's step matches
  const char* fix;
};

constexpr MistakeText kMistakes[] = {
    {Mistake::l2_for_adamw, "Adam with an L2 penalty: wd p added to the gradient",
     "with decoupled true (AdamW) shrink the weight itself, p = p (1 - lr wd), before the step, "
     "and let the gradient enter m and v as it is. The L2 penalty's gradient goes through m and "
     "v and is then divided by sqrt(v_hat): the difference Loshchilov and Hutter made AdamW for."},
    {Mistake::decoupled_for_l2, "AdamW's decoupled decay where decoupled is false",
     "decoupled false is Adam with an L2 penalty: g = grad + wd p goes into m and v, and the "
     "weight is not shrunk separately."},
    {Mistake::decay_after_step, "the decay applied to the weight after the Adam step",
     "shrink the weight before the step, p = p (1 - lr wd), then subtract the step: the decay "
     "multiplies the old weight, not the updated one (kernels/args.h, AdamArgs)."},
    {Mistake::no_decay, "no weight decay at all",
     "apply a.weight_decay: with decoupled true, "
     "p = p (1 - lr wd) before the step; with decoupled false, g = grad + wd p."},
    {Mistake::no_bias_correction, "m and v without their bias corrections",
     "the step is lr m_hat / (sqrt(v_hat) + eps) with m_hat = m / bias_correction1 and v_hat = "
     "v / bias_correction2 (both given in the args)."},
    {Mistake::eps_inside_sqrt, "eps added inside the square root",
     "eps is added outside it: sqrt(v_hat) + eps. With gradients near 1e-5, sqrt(v_hat) is near "
     "1e-5 and sqrt(v_hat + eps) near 1e-4: a step 10 times too small."},
    {Mistake::moments_after_step, "a step taken with m and v from before this gradient",
     "update m and v with this step's gradient first, then take the step from the new m and v."},
};

// One step of the formulas in float64 (kernels/args.h, AdamArgs), made with `mistake`.
struct ModelStep {
  std::vector<double> p, m, v;
};

ModelStep model_step(const StepInputs& in, const AdamHyper& h, Mistake mistake) {
  ModelStep s{in.p.to_vector<double>(), in.m.to_vector<double>(), in.v.to_vector<double>()};
  const std::vector<double> g = in.g.to_vector<double>();
  const double t = static_cast<double>(h.step);
  const bool corrected = mistake != Mistake::no_bias_correction;
  const double bc1 = corrected ? 1 - std::pow(h.beta1, t) : 1;
  const double bc2 = corrected ? 1 - std::pow(h.beta2, t) : 1;
  const double wd = mistake == Mistake::no_decay ? 0 : h.weight_decay;
  bool decoupled = h.decoupled;
  if (mistake == Mistake::l2_for_adamw) decoupled = false;
  if (mistake == Mistake::decoupled_for_l2) decoupled = true;
  for (size_t i = 0; i < g.size(); ++i) {
    double& p = s.p[i];
    const double gi = decoupled ? g[i] : g[i] + wd * p;
    const double m_old = s.m[i], v_old = s.v[i];
    if (decoupled && mistake != Mistake::decay_after_step) p *= 1 - h.lr * wd;
    s.m[i] = h.beta1 * m_old + (1 - h.beta1) * gi;
    s.v[i] = h.beta2 * v_old + (1 - h.beta2) * gi * gi;
    const bool stale = mistake == Mistake::moments_after_step;
    const double m_hat = (stale ? m_old : s.m[i]) / bc1;
    const double v_hat = (stale ? v_old : s.v[i]) / bc2;
    const double denom =
        mistake == Mistake::eps_inside_sqrt ? std::sqrt(v_hat + h.eps) : std::sqrt(v_hat) + h.eps;
    p -= h.lr * m_hat / denom;
    if (decoupled && mistake == Mistake::decay_after_step) p *= 1 - h.lr * wd;
  }
  return s;
}

// compare.h's error of the kernel's step against a model's, the largest over param, m and v.
double error_against(const StepResult& got, const ModelStep& want) {
  double worst = 0;
  const std::pair<const Tensor*, const std::vector<double>*> buffers[] = {
      {&got.p, &want.p}, {&got.m, &want.m}, {&got.v, &want.v}};
  for (const auto& [g, w] : buffers) {
    worst = std::max(worst, compare(*g, from_vector(*w, g->shape()).to(DType::f32)).error);
  }
  return worst;
}

// A float32 step of the right formulas is within a few 1e-7 of the float64 one (the step
// tolerance is 1e-6), and the subtlest mistake here, the decay after the step, moves this
// suite's step by 8.6e-6: a mistake is named when its step is within the step tolerance of the
// kernel's and at least 4 times closer than the right one's.
constexpr double kMatchTolerance = kStepTolerance;

// The usual mistake the kernel's step matches on this case, or nullptr for none.
const MistakeText* diagnose(const StepInputs& in, const AdamHyper& h, const StepResult& got) {
  const double right = error_against(got, model_step(in, h, Mistake::none));
  for (const MistakeText& m : kMistakes) {
    const double wrong = error_against(got, model_step(in, h, m.mistake));
    if (wrong <= kMatchTolerance && 4 * wrong < right) return &m;
  }
  return nullptr;
}

// ---- the trajectory ----------------------------------------------------------------------------

constexpr int kSteps = 20;
constexpr int64_t kTrajectoryN = 4099;

// kSteps AdamW steps of the learner's kernel from one start, beside the same steps from the
// formulas in float64 (kernels/args.h, AdamArgs):
//   p = p (1 - lr wd);  m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
//   p = p - lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
// The gradients are the same float32 values for both; the first 64 parameters get gradients
// near 1e-5 (a rarely used embedding row, say), where eps is not negligible.
bool check_trajectory(const kernels::KernelEntry& user, uint64_t seed) {
  manual_seed(seed + 2000);
  const AdamHyper base = hyper(1e-2, 0.1, true, 1);
  const int64_t n = kTrajectoryN;
  Tensor p = randn({n}), m = zeros({n}), v = zeros({n});
  std::vector<double> P = p.to_vector<double>(), M(static_cast<size_t>(n), 0.0),
                      V(static_cast<size_t>(n), 0.0);
  double worst = -1, got_at = 0, want_at = 0;
  int worst_step = 0;
  int64_t worst_i = 0;
  std::string worst_buf;
  for (int t = 1; t <= kSteps; ++t) {
    // Gradients with a drift (0.1) so that m builds up, as real gradients do.
    std::vector<float> g = (randn({n}) + 0.1).to_vector<float>();
    for (int64_t i = 0; i < 64; ++i) g[static_cast<size_t>(i)] *= 1e-5f;
    AdamHyper h = base;
    h.step = t;
    {
      kernels::Use use(kOp, user.name);
      adam_update_(p, from_vector(g, {n}), m, v, h);
    }
    const double bc1 = 1 - std::pow(h.beta1, t), bc2 = 1 - std::pow(h.beta2, t);
    for (size_t i = 0; i < P.size(); ++i) {
      const double gi = g[i];
      P[i] *= 1 - h.lr * h.weight_decay;
      M[i] = h.beta1 * M[i] + (1 - h.beta1) * gi;
      V[i] = h.beta2 * V[i] + (1 - h.beta2) * gi * gi;
      P[i] -= h.lr * (M[i] / bc1) / (std::sqrt(V[i] / bc2) + h.eps);
    }
    // compare.h's error of each buffer against the float64 values rounded to float32.
    const std::tuple<const Tensor*, const std::vector<double>*, const char*> buffers[] = {
        {&p, &P, "param"}, {&m, &M, "m"}, {&v, &V, "v"}};
    for (const auto& [got, want, name] : buffers) {
      const Comparison c = compare(*got, from_vector(*want, {n}).to(DType::f32));
      if (c.error > worst) {
        worst = c.error;
        worst_step = t;
        worst_i = c.worst;
        worst_buf = name;
        got_at = c.got;
        want_at = c.want;
      }
    }
  }
  const bool ok = worst <= kTrajectoryTolerance;
  fmt::print(
      "  {} AdamW steps (lr 0.01, wd 0.1) on {} parameters, float32 yours vs float64 formulas  "
      "{}  worst error {} (tolerance {}) at step {}, {}[{}]: got {:.8g}, want {:.8g}\n",
      kSteps, n, ok ? "PASS" : "FAIL", error_text(worst), error_text(kTrajectoryTolerance),
      worst_step, worst_buf, worst_i, got_at, want_at);
  if (!ok) {
    fmt::print(
        "\nhint (trajectory): every single step agreed with prism's fused kernel, but over {} "
        "steps your parameters drift from the float64 formulas. Look for a quantity rounded to "
        "float32 that the formulas keep exact, or a step-dependent term (t = 1 .. {}).\n",
        kSteps, kSteps);
  }
  return ok;
}

// ---- the whole check ---------------------------------------------------------------------------

const kernels::KernelEntry* find_user_kernel(const char* file) {
  for (const auto& e : kernels::registry().at(kOp, Device::cpu).entries()) {
    if (e.tag == kernels::VariantTag::user) return &e;
  }
  fmt::print(stderr,
             "checker: no kernel is registered for op '{}' in this program. Keep the line\n"
             "  PRISM_REGISTER_KERNEL({}, <your function>);\n"
             "at the end of {}. If the program printed 'could not register' above, your\n"
             "function's parameter is not AdamArgs<float>.\n",
             kOp, kOp, file);
  return nullptr;
}

// Returns -1 when the kernel is not correct, else the tiers reached (0 without timing).
int check(const Exercise& ex, const kernels::KernelEntry& user, const Options& o,
          std::string& next_tier) {
  fmt::print("\nkernel '{}' for op '{}', one step against '{}' (float32); tolerance {}: {}\n",
             user.name, kOp, kYardstick, error_text(kStepTolerance), ex.tolerance_why);
  manual_seed(o.seed);
  const std::vector<StepCase> cases = step_cases();
  size_t width = 0;
  for (const StepCase& c : cases) width = std::max(width, c.label.size());
  int passed = 0;
  bool unsafe = false;
  std::string first_hint;
  for (const StepCase& c : cases) {
    fmt::print("  {:<{}}  ", c.label, width);
    std::fflush(stdout);
    note_step(o, "case " + c.label);
    const StepInputs in = make_inputs(c);
    if (unsafe) {
      fmt::print("SKIP  (it wrote outside its buffers above: fix that first)\n");
      continue;
    }
    const StepResult want = run_step(kYardstick, in, c.h);
    const StepResult got = run_step(user.name, in, c.h);
    std::string hint;
    if (!got.outside.empty()) {
      unsafe = true;
      fmt::print("FAIL  {}\n", got.outside);
      hint =
          "Your kernel wrote outside param, m or v. In prism that overwrites other memory. "
          "The loop runs over i < a.numel, once.";
    } else {
      const StepComparison s = compare_step(got, want);
      const bool ok = s.cmp.error <= kStepTolerance;
      passed += ok;
      if (ok) {
        fmt::print("PASS  error {}\n", error_text(s.cmp.error));
        continue;
      }
      fmt::print("FAIL  error {} at {}[{}]: got {:.7g}, want {:.7g}\n", error_text(s.cmp.error),
                 s.buffer, s.cmp.worst, s.cmp.got, s.cmp.want);
      hint = fmt::format("The step differs from the '{}' variant's by {} (tolerance {}).",
                         kYardstick, error_text(s.cmp.error), error_text(kStepTolerance));
      if (const MistakeText* m = diagnose(in, c.h, got)) {
        hint += fmt::format("\nYour step matches {} (within {} on param, m and v): {}", m->what,
                            error_text(kMatchTolerance), m->fix);
      } else {
        std::string known;
        for (const MistakeText& k : kMistakes) {
          known += (known.empty() ? "" : "; ") + std::string(k.what);
        }
        hint += fmt::format(
            " It matches none of the usual mistakes the checker computes ({}): compare your loop "
            "with the formulas in README.md, line by line, at {}[{}].",
            known, s.buffer, s.cmp.worst);
        if (!c.hint.empty()) hint += "\nWhat this case checks: " + c.hint;
      }
    }
    if (first_hint.empty()) first_hint = "hint (" + c.label + "): " + hint;
  }
  const int n = static_cast<int>(cases.size());
  fmt::print("{} of {} cases passed.\n", passed, n);
  if (passed < n) {
    fmt::print("\n{}\n", first_hint);
    return -1;
  }
  fmt::print("\nthe trajectory (tolerance {}: {}):\n", error_text(kTrajectoryTolerance),
             "the solution's 20 steps of float32 rounding end 3e-7 to 5e-7 away");
  note_step(o, "the trajectory");
  if (!check_trajectory(user, o.seed)) return -1;
  if (!o.timing) {
    next_tier = "not graded";
    return 0;
  }
  note_step(o, "timing (the performance tiers)");
  return time_and_grade(ex, user, o, next_tier);
}

const char* const kTier1 =
    "one loop over i that reads p, g, m and v once and writes p, m and v once: 7 numbers per "
    "element, where per_tensor moves 20 or more, but in passes that are each vectorised. If "
    "yours is one loop already and still loses, it is not vectorised: GCC does not vectorise a "
    "loop that calls std::sqrt unless errno may be ignored (-fno-math-errno: prism's kernels "
    "have it, your file does not). Write the loop with std::experimental::simd, whose "
    "stdx::sqrt is the vector instruction (README.md, Hints).";
const char* const kTier2 =
    "no branch inside the loop (one loop per weight-decay mode, chosen before it), the double "
    "hyperparameters converted to float once before it, lr / bias_correction1 and "
    "sqrt(bias_correction2) computed once, and the loop over whole vectors of 8 floats with a "
    "scalar tail.";

Exercise make_exercise() {
  Exercise ex;
  ex.id = "12_adamw";
  ex.file = "exercises/12_adamw/adamw.cpp";
  ex.op = kOp;
  ex.title = "one AdamW step in place: decoupled weight decay, bias correction (AdamArgs)";
  ex.tolerance = kStepTolerance;
  ex.tolerance_why =
      "one step is a dozen float32 operations per element; done in another order or with fused "
      "multiply-adds they differ by an ulp or two (1.2e-7 of the largest value each), where a "
      "wrong formula is off by 1e-5 or more";
  ex.quick_timing_sizes = {"65536"};
  // In L2 (7 arrays of 4096 floats: 114 KB), past L2 (7.3 MB), far past it (117 MB).
  ex.timing_sizes = {"4096", "262144", "4194304"};
  ex.tiers = {{"beats per_tensor", "per_tensor", 1.0, kTier1},
              {"within 1.2x of prism's fused loop", "fused", 1.2, kTier2}};
  ex.run = [](const Options& o) -> Outcome {
    const Exercise* self = nullptr;
    for (const Exercise& e : all_exercises()) {
      if (e.id == "12_adamw") self = &e;
    }
    const kernels::KernelEntry* user = find_user_kernel("exercises/12_adamw/adamw.cpp");
    if (!self || !user) return {2};
    std::string next;
    const int tier = check(*self, *user, o, next);
    if (tier < 0) return {1, 0, o.timing ? static_cast<int>(self->tiers.size()) : 0};
    return {0, tier, o.timing ? static_cast<int>(self->tiers.size()) : 0, next};
  };
  return ex;
}

}  // namespace

static const bool registered = add_exercise(make_exercise());

}  // namespace prism::exercises
