// Optimizers (nn/optim/) and the in-place update ops under them (tensor/optim_ops.h): exact
// values against numbers worked out by hand, what the profiler and the memory tracker see of a
// step, convergence, errors, LR schedules, and a cross-check of each update op against the same
// math composed from ordinary tensor ops.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numbers>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/ops/optim/op.h"
#include "kernels/registry.h"
#include "nn/optim/adam.h"
#include "nn/optim/lr_schedule.h"
#include "nn/optim/sgd.h"
#include "profiler/memory.h"
#include "profiler/session.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/ops.h"
#include "tensor/optim_ops.h"

namespace {

using prism::AdamHyper;
using prism::Dims;
using prism::DType;
using prism::Error;
using prism::MemRole;
using prism::SgdHyper;
using prism::Tensor;
using prism::nn::optim::Adam;
using prism::nn::optim::AdamW;
using prism::nn::optim::CosineAnnealing;
using prism::nn::optim::SGD;
using prism::nn::optim::StepLR;
using prism::profiler::Cost;
using prism::profiler::Kind;
using prism::profiler::OpRecord;
using prism::profiler::Phase;
using prism::profiler::Profile;
using prism::profiler::Session;

// A trainable leaf holding `values`.
Tensor leaf(const std::vector<double>& values, const Dims& shape, DType dtype = DType::f64) {
  Tensor t = prism::from_vector(values, shape);
  if (dtype != DType::f64) t = prism::cast(t, dtype);
  t.set_requires_grad();
  return t;
}
Tensor leaf(const std::vector<double>& values) {
  return leaf(values, {static_cast<int64_t>(values.size())});
}

// Gives `p` the gradient `values`, as backward would have left it (a dense buffer of its own).
void set_grad(const Tensor& p, const std::vector<double>& values) {
  Tensor g = prism::from_vector(values, p.shape());
  if (p.dtype() != DType::f64) g = prism::cast(g, p.dtype());
  p.impl().grad = g.impl_ptr();
}

// The gradients of the hand-worked examples, one per step.
const std::vector<std::vector<double>> kGrads = {{0.5, -1.0}, {0.25, 0.5}, {-1.0, 2.0}};

void check_close(const Tensor& t, const std::vector<double>& expect, double tol = 1e-12) {
  const std::vector<double> got = t.to_vector<double>();
  REQUIRE(got.size() == expect.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", expected " << expect[i]);
    CHECK(std::abs(got[i] - expect[i]) <= tol * std::max(1.0, std::abs(expect[i])));
  }
}

// Runs three steps of `opt` on `p` (starting at [1, -2]) with kGrads and returns p after each.
template <class Opt>
std::vector<std::vector<double>> three_steps(Opt& opt, const Tensor& p) {
  std::vector<std::vector<double>> out;
  for (const auto& g : kGrads) {
    set_grad(p, g);
    opt.step();
    opt.zero_grad();
    out.push_back(p.to_vector<double>());
  }
  return out;
}

void check_steps(const std::vector<std::vector<double>>& got,
                 const std::vector<std::vector<double>>& expect, double tol = 1e-12) {
  REQUIRE(got.size() == expect.size());
  for (size_t s = 0; s < got.size(); ++s) {
    INFO("after step " << s + 1);
    check_close(prism::from_vector(got[s], {static_cast<int64_t>(got[s].size())}), expect[s], tol);
  }
}

std::vector<const OpRecord*> ops_named(const Profile& p, std::string_view op) {
  std::vector<const OpRecord*> out;
  for (const OpRecord& r : p.recording.records) {
    if (r.kind == Kind::op && op == r.op) out.push_back(&r);
  }
  return out;
}

int64_t optimizer_bytes() {
  return prism::profiler::memory_stats(0).live_by_role[static_cast<size_t>(MemRole::optimizer)];
}

bool throws_containing(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
  } catch (const Error& e) {
    const std::string what = e.what();
    INFO("message: " << what);
    CHECK(what.find(needle) != std::string::npos);
    return what.find(needle) != std::string::npos;
  }
  return false;
}

}  // namespace

// ---- exact values ---------------------------------------------------------------------------

TEST_CASE("SGD without momentum: p -= lr g, three steps by hand") {
  Tensor p = leaf({1.0, -2.0});
  SGD opt({p}, 0.1);
  // [1, -2] - 0.1 [0.5, -1] = [0.95, -1.9]; - 0.1 [0.25, 0.5] = [0.925, -1.95];
  // - 0.1 [-1, 2] = [1.025, -2.15].
  check_steps(three_steps(opt, p), {{0.95, -1.9}, {0.925, -1.95}, {1.025, -2.15}});
  CHECK_FALSE(opt.velocity(0).defined());  // no momentum, no state
  CHECK(opt.step_count() == 3);
}

TEST_CASE("SGD with momentum: v = mu v + g, p -= lr v") {
  Tensor p = leaf({1.0, -2.0});
  SGD opt({p}, 0.1, 0.9);
  // v1 = g1 = [0.5, -1]                         p1 = [0.95, -1.9]
  // v2 = 0.9 v1 + g2 = [0.7, -0.4]              p2 = [0.88, -1.86]
  // v3 = 0.9 v2 + g3 = [-0.37, 1.64]            p3 = [0.917, -2.024]
  check_steps(three_steps(opt, p), {{0.95, -1.9}, {0.88, -1.86}, {0.917, -2.024}});
  check_close(opt.velocity(0), {-0.37, 1.64});
}

TEST_CASE("SGD with weight decay: g = grad + wd p") {
  Tensor p = leaf({1.0, -2.0});
  SGD opt({p}, 0.1, 0.0, 0.1);
  // g1 = [0.5, -1] + 0.1 [1, -2] = [0.6, -1.2]                 p1 = [0.94, -1.88]
  // g2 = [0.25, 0.5] + 0.1 p1 = [0.344, 0.312]                 p2 = [0.9056, -1.9112]
  // g3 = [-1, 2] + 0.1 p2 = [-0.90944, 1.80888]                p3 = [0.996544, -2.092088]
  check_steps(three_steps(opt, p), {{0.94, -1.88}, {0.9056, -1.9112}, {0.996544, -2.092088}});
}

TEST_CASE("SGD with momentum, weight decay and Nesterov") {
  Tensor p = leaf({1.0, -2.0});
  SGD opt({p}, 0.1, 0.9, 0.1, true);
  CHECK(opt.nesterov());
  // g1 = [0.6, -1.2], v1 = g1, step = g1 + 0.9 v1 = [1.14, -2.28]         p1 = [0.886, -1.772]
  // g2 = [0.3386, 0.3228], v2 = [0.8786, -0.7572], step = [1.12934, -0.35868]
  //                                                            p2 = [0.773066, -1.736132]
  // g3 = [-0.9226934, 1.8263868], v3 = [-0.1319534, 1.1449068],
  // step = [-1.04145146, 2.85680292]                    p3 = [0.877211146, -2.021812292]
  check_steps(three_steps(opt, p),
              {{0.886, -1.772}, {0.773066, -1.736132}, {0.877211146, -2.021812292}});
  check_close(opt.velocity(0), {-0.1319534, 1.1449068});
}

TEST_CASE("Adam: bias-corrected moments, three steps") {
  Tensor p = leaf({1.0, -2.0});
  Adam opt({p}, 0.1);  // betas 0.9, 0.999, eps 1e-8
  // Step 1: m = 0.1 g, v = 0.001 g^2, so m_hat = g and v_hat = g^2: the step is
  // lr g / (|g| + eps) = 0.1 sign(g) (less a hair for eps): p1 = [0.9000000019999999600,
  // -1.9000000009999999900]. Steps 2 and 3 worked out in 40-digit decimal arithmetic.
  check_steps(three_steps(opt, p), {{0.90000000199999996, -1.90000000099999999},
                                    {0.80678204047746167, -1.87336629737090297},
                                    {0.82741774288541076, -1.91909947602602328}});
  // m3 = 0.9 m2 + 0.1 g3 = 0.9 [0.07, -0.04] + [-0.1, 0.2] = [-0.037, 0.164]
  check_close(opt.exp_avg(0), {-0.037, 0.164});
  // v3 = 0.999 v2 + 0.001 g3^2 = [0.00131193775, 0.005247751]
  check_close(opt.exp_avg_sq(0), {0.00131193775, 0.005247751});
  CHECK(opt.param_steps(0) == 3);
}

TEST_CASE("Adam with L2 weight decay: the decay goes through the moments") {
  Tensor p = leaf({1.0, -2.0});
  Adam opt({p}, 0.1, {0.9, 0.999}, 1e-8, 0.1);
  CHECK_FALSE(opt.decoupled());
  // g1 = [0.5, -1] + 0.1 [1, -2] = [0.6, -1.2]: m1 = [0.06, -0.12], v1 = [0.00036, 0.00144].
  check_steps(three_steps(opt, p), {{0.90000000166666664, -1.90000000083333333},
                                    {0.80500976586131928, -1.85374726464276058},
                                    {0.81209826077867662, -1.88636311586398971}});
}

TEST_CASE("AdamW: decoupled decay p *= 1 - lr wd, moments of the raw gradient") {
  Tensor p = leaf({1.0, -2.0});
  AdamW opt({p}, 0.1, {0.9, 0.999}, 1e-8, 0.1);
  CHECK(opt.decoupled());
  CHECK(std::string(opt.name()) == "AdamW");
  // Step 1: p = [1, -2] * (1 - 0.01) = [0.99, -1.98], then the Adam step of about 0.1 sign(g):
  // p1 = [0.89000000199999996, -1.88000000099999999].
  check_steps(three_steps(opt, p), {{0.89000000199999996, -1.88000000099999999},
                                    {0.78788204045746167, -1.83456629736090297},
                                    {0.80063892246083614, -1.86195381304241425}});
  // The moments are those of plain Adam: the decay never enters them.
  check_close(opt.exp_avg(0), {-0.037, 0.164});
  check_close(opt.exp_avg_sq(0), {0.00131193775, 0.005247751});
  CHECK(AdamW({leaf({1.0})}).weight_decay() == 0.01);  // PyTorch's default
}

TEST_CASE("float32 updates agree with float64 to float32 precision") {
  for (int which = 0; which < 2; ++which) {
    Tensor p64 = leaf({1.0, -2.0, 0.5, 3.0}, {2, 2});
    Tensor p32 = leaf({1.0, -2.0, 0.5, 3.0}, {2, 2}, DType::f32);
    const std::vector<std::vector<double>> grads = {
        {0.5, -1.0, 0.1, 2.0}, {0.25, 0.5, -0.3, 1.0}, {-1.0, 2.0, 0.7, -0.5}};
    auto run = [&](auto& opt64, auto& opt32) {
      for (const auto& g : grads) {
        set_grad(p64, g);
        set_grad(p32, g);
        opt64.step();
        opt32.step();
      }
    };
    if (which == 0) {
      SGD a({p64}, 0.1, 0.9, 0.01, true), b({p32}, 0.1, 0.9, 0.01, true);
      run(a, b);
      CHECK(b.velocity(0).dtype() == DType::f32);
    } else {
      AdamW a({p64}, 0.05), b({p32}, 0.05);
      run(a, b);
      CHECK(b.exp_avg(0).dtype() == DType::f32);
    }
    CHECK(p32.dtype() == DType::f32);
    check_close(p32, p64.to_vector<double>(), 1e-6);
  }
}

// ---- what the profiler and the memory tracker see -----------------------------------------------

TEST_CASE("an SGD step is recorded: phase optimizer, op sgd_update, its FLOPs and bytes") {
  Tensor w = leaf(std::vector<double>(12, 1.0), {3, 4});
  Tensor b = leaf(std::vector<double>(4, 1.0), {4});
  SGD opt({w, b}, 0.1, 0.9, 0.01);
  set_grad(w, std::vector<double>(12, 0.5));
  set_grad(b, std::vector<double>(4, 0.5));
  Session session;
  opt.step();
  const Profile& prof = session.stop();

  const auto updates = ops_named(prof, "sgd_update");
  REQUIRE(updates.size() == 2);
  // momentum and weight decay: 2 + 2 + 2 = 6 FLOPs per element; param read + write, grad read,
  // velocity read + write = 5 accesses of 8 bytes per element.
  CHECK(updates[0]->cost == Cost{6 * 12, 0, 5 * 12 * 8});
  CHECK(updates[1]->cost == Cost{6 * 4, 0, 5 * 4 * 8});
  for (const OpRecord* r : updates) {
    CHECK(r->phase == Phase::optimizer);
    CHECK(std::string(r->variant) == "fused");
    CHECK(r->allocs == 0);        // in place
    CHECK(r->shapes.count == 3);  // param, grad, velocity
    CHECK(prof.recording.scope_paths.at(static_cast<size_t>(r->scope)) == "SGD");
  }
  // The first step created the velocities: zeros, also in the optimizer phase.
  int state_ops = 0;
  for (const OpRecord& r : prof.recording.records) {
    if (r.kind != Kind::op) continue;
    CHECK(r.phase == Phase::optimizer);
    if (std::string_view(r.op) != "sgd_update") ++state_ops;
  }
  CHECK(state_ops >= 2);
  // One scope span around the step.
  int scopes = 0;
  for (const OpRecord& r : prof.recording.records) scopes += r.kind == Kind::scope;
  CHECK(scopes == 1);
}

TEST_CASE("an Adam step is recorded as adam_update with 13 to 15 FLOPs per element") {
  Tensor p = leaf(std::vector<double>(10, 1.0), {2, 5});
  Adam adam({p}, 0.01);
  AdamW adamw({p}, 0.01, {}, 1e-8, 0.1);
  Adam adam_l2({p}, 0.01, {}, 1e-8, 0.1);
  set_grad(p, std::vector<double>(10, 0.5));
  Session session;
  adam.step();
  adamw.step();
  adam_l2.step();
  const Profile& prof = session.stop();
  const auto updates = ops_named(prof, "adam_update");
  REQUIRE(updates.size() == 3);
  // param, m, v read and written, grad read: 7 accesses of 8 bytes.
  CHECK(updates[0]->cost == Cost{13 * 10, 0, 7 * 10 * 8});
  CHECK(updates[1]->cost == Cost{14 * 10, 0, 7 * 10 * 8});  // + the decoupled shrink
  CHECK(updates[2]->cost == Cost{15 * 10, 0, 7 * 10 * 8});  // + the L2 term
  for (const OpRecord* r : updates) {
    CHECK(r->phase == Phase::optimizer);
    CHECK(r->shapes.count == 4);
    CHECK(r->allocs == 0);
  }
  CHECK(prof.recording.scope_paths.at(static_cast<size_t>(updates[1]->scope)) == "AdamW");
}

TEST_CASE("the update ops' cost formulas") {
  using prism::costs::adam_update;
  using prism::costs::sgd_update;
  CHECK(sgd_update(10, 4, false, false, false) == Cost{20, 0, 3 * 10 * 4});
  CHECK(sgd_update(10, 4, true, false, false) == Cost{40, 0, 3 * 10 * 4});
  CHECK(sgd_update(10, 8, false, true, false) == Cost{40, 0, 5 * 10 * 8});
  CHECK(sgd_update(10, 8, true, true, true) == Cost{80, 0, 5 * 10 * 8});
  CHECK(sgd_update(0, 4, true, true, true) == Cost{0, 0, 0});
  CHECK(adam_update(10, 4, false, false) == Cost{130, 0, 7 * 10 * 4});
  CHECK(adam_update(10, 4, false, true) == Cost{130, 0, 7 * 10 * 4});  // no decay, no shrink
  CHECK(adam_update(10, 4, true, true) == Cost{140, 0, 7 * 10 * 4});
  CHECK(adam_update(10, 8, true, false) == Cost{150, 0, 7 * 10 * 8});
  // The registry knows both ops, with a fused float32 + float64 kernel as the default (and an
  // unfused per_tensor one to compare) and a formula in words.
  for (const char* op : {"sgd_update", "adam_update"}) {
    const auto& k = prism::kernels::registry().at(op, prism::Device::cpu);
    CHECK(k.default_entry().name == "fused");
    CHECK(k.find("per_tensor") != nullptr);
    CHECK(k.default_entry().has(DType::f32));
    CHECK(k.default_entry().has(DType::f64));
    CHECK_FALSE(std::string_view(k.cost_formula()).empty());
  }
}

TEST_CASE("optimizer state is allocated lazily with role optimizer, and freed with it") {
  const int64_t before = optimizer_bytes();
  {
    Tensor w = leaf(std::vector<double>(12, 1.0), {3, 4});
    Tensor b = leaf(std::vector<double>(4, 1.0), {4});
    Adam opt({w, b}, 0.01);
    CHECK(optimizer_bytes() == before);  // nothing until the first step
    set_grad(w, std::vector<double>(12, 0.5));
    set_grad(b, std::vector<double>(4, 0.5));
    opt.step();
    CHECK(optimizer_bytes() == before + 2 * (12 + 4) * 8);  // m and v of each
    opt.step();
    CHECK(optimizer_bytes() == before + 2 * (12 + 4) * 8);  // reused, not reallocated
    // The state does not leak into other roles' counts, nor other roles into it.
    CHECK(opt.exp_avg(0).storage()->role() == MemRole::optimizer);
    CHECK(opt.exp_avg_sq(1).storage()->role() == MemRole::optimizer);
    CHECK(w.storage()->role() != MemRole::optimizer);
  }
  CHECK(optimizer_bytes() == before);
  {
    Tensor w = leaf(std::vector<double>(6, 1.0), {2, 3}, DType::f32);
    SGD momentum({w}, 0.1, 0.9);
    SGD plain({w}, 0.1);
    set_grad(w, std::vector<double>(6, 0.5));
    plain.step();
    CHECK(optimizer_bytes() == before);  // plain SGD keeps no state
    momentum.step();
    CHECK(optimizer_bytes() == before + 6 * 4);
  }
  CHECK(optimizer_bytes() == before);
}

TEST_CASE("on the meta device a step counts its FLOPs and state memory and runs no kernel") {
  prism::DefaultDevice meta(prism::Device::meta);
  const int dev = static_cast<int>(prism::Device::meta);
  auto meta_optimizer_bytes = [&] {
    return prism::profiler::memory_stats(dev).live_by_role[static_cast<size_t>(MemRole::optimizer)];
  };
  Tensor w = prism::randn({64, 32}).set_requires_grad();
  Tensor loss = prism::sum(w * w);
  loss.backward();
  REQUIRE(w.grad().defined());
  const int64_t before = meta_optimizer_bytes();
  AdamW opt({w}, 0.01);
  Session session;
  opt.step();
  const Profile& prof = session.stop();
  const auto updates = ops_named(prof, "adam_update");
  REQUIRE(updates.size() == 1);
  CHECK(std::string(updates[0]->variant) == "meta");
  CHECK(std::string(updates[0]->device) == "meta");
  CHECK(updates[0]->phase == Phase::optimizer);
  CHECK(updates[0]->cost == Cost{14 * 64 * 32, 0, 7 * 64 * 32 * 4});
  CHECK(meta_optimizer_bytes() == before + 2 * 64 * 32 * 4);
  CHECK(opt.exp_avg(0).device() == prism::Device::meta);
}

TEST_CASE("step runs without grad mode and leaves the parameters trainable leaves") {
  Tensor p = leaf({1.0, 2.0});
  SGD opt({p}, 0.1);
  set_grad(p, {1.0, 1.0});
  CHECK(prism::grad_enabled());
  opt.step();
  CHECK(prism::grad_enabled());  // restored
  CHECK(p.is_leaf());
  CHECK(p.requires_grad());
  CHECK(p.grad().defined());  // step does not drop gradients; zero_grad does
  opt.zero_grad();
  CHECK_FALSE(p.grad().defined());
}

// ---- training --------------------------------------------------------------------------------

namespace {
// Minimises f(p) = sum((p - target)^2) with backward() and `opt` for `steps` steps; returns the
// largest |p - target| at the end.
template <class Opt>
double minimise_quadratic(Opt& opt, const Tensor& p, const Tensor& target, int steps) {
  for (int s = 0; s < steps; ++s) {
    Tensor d = p - target;
    Tensor loss = prism::sum(d * d);
    loss.backward();
    opt.step();
    opt.zero_grad();
  }
  double worst = 0;
  const auto got = p.to_vector<double>();
  const auto want = target.to_vector<double>();
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
  return worst;
}
}  // namespace

TEST_CASE("SGD, momentum SGD, Adam and AdamW minimise a quadratic") {
  const std::vector<double> start = {3.0, -1.0, 0.5, 4.0, -2.5, 1.0};
  Tensor target = prism::from_vector(std::vector<double>{1.0, 2.0, -1.0, 0.0, 0.5, -3.0}, {2, 3});
  {
    Tensor p = leaf(start, {2, 3});
    SGD opt({p}, 0.1);
    CHECK(minimise_quadratic(opt, p, target, 100) < 1e-6);
  }
  {
    Tensor p = leaf(start, {2, 3});
    SGD opt({p}, 0.05, 0.9, 0.0, true);
    CHECK(minimise_quadratic(opt, p, target, 400) < 1e-6);
  }
  {
    Tensor p = leaf(start, {2, 3}, DType::f32);
    // Adam's steps shrink once the gradient falls below what v remembers (beta2 = 0.999 is a
    // memory of ~1000 steps), so a deterministic quadratic wants a decaying lr to finish:
    // lr 0.1, 20 warmup steps, then a cosine to 0 over 400 steps (1e-6 away at the end).
    Adam opt({p}, 0.1);
    CosineAnnealing sched(opt, 400, 0.0, 20);
    double err = 0;
    for (int s = 0; s < 420; ++s) {
      err = minimise_quadratic(opt, p, prism::cast(target, DType::f32), 1);
      sched.step();
    }
    CHECK(err < 1e-4);
  }
  {
    // Decoupled decay pulls the answer toward 0 by about lr wd |p| per step, a little.
    Tensor p = leaf(start, {2, 3});
    AdamW opt({p}, 0.05, {}, 1e-8, 1e-4);
    CHECK(minimise_quadratic(opt, p, target, 600) < 1e-3);
  }
}

TEST_CASE("parameters without a gradient are skipped and get no state") {
  Tensor a = leaf({1.0, 2.0});
  Tensor frozen = leaf({5.0, 6.0});
  {
    SGD opt({a, frozen}, 0.1, 0.9);
    set_grad(a, {1.0, 1.0});
    opt.step();
    check_close(a, {0.9, 1.9});
    check_close(frozen, {5.0, 6.0});
    CHECK(opt.velocity(0).defined());
    CHECK_FALSE(opt.velocity(1).defined());
  }
  {
    Adam opt({a, frozen}, 0.1);
    set_grad(a, {1.0, 1.0});
    opt.step();
    opt.step();
    set_grad(frozen, {1.0, -1.0});
    opt.step();
    CHECK(opt.param_steps(0) == 3);
    CHECK(opt.param_steps(1) == 1);         // its own t: the first step it took is t = 1
    check_close(frozen, {4.9, 6.1}, 1e-7);  // a full bias-corrected first step, 0.1 sign(g)
  }
  {
    a.zero_grad();
    frozen.zero_grad();
    const std::vector<double> before = a.to_vector<double>();
    SGD opt({a, frozen}, 0.1);
    opt.step();  // nobody has a gradient: nothing happens, still a step
    CHECK(opt.step_count() == 1);
    check_close(a, before);
  }
}

// ---- errors ----------------------------------------------------------------------------------

TEST_CASE("update ops refuse bad tensors and hyperparameters, changing nothing") {
  prism::NoGrad no_grad;
  Tensor p = prism::from_vector(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor g = prism::ones({2, 3}, DType::f64);
  Tensor vel = prism::zeros({2, 3}, DType::f64);
  SgdHyper h;
  h.lr = 0.1;
  h.momentum = 0.9;
  CHECK(throws_containing(
      [&] {
        prism::sgd_update_(p, prism::ones({3, 2}, DType::f64), vel, h);
      },
      "sgd_update: grad has shape [3,2] but param has shape [2,3]"));
  CHECK(throws_containing([&] { prism::sgd_update_(p, prism::ones({2, 3}), vel, h); }, "float32"));
  Tensor pt = prism::from_vector(std::vector<double>{1, 2, 3, 4, 5, 6}, {3, 2}).t();
  CHECK(throws_containing([&] { prism::sgd_update_(pt, g, vel, h); }, "contiguous"));
  CHECK(throws_containing([&] { prism::sgd_update_(p, g.t().contiguous().t(), vel, h); },
                          "grad must be contiguous"));
  CHECK(throws_containing([&] { prism::sgd_update_(p, g, Tensor(), h); }, "velocity"));
  CHECK(throws_containing([&] { prism::sgd_update_(p, g, p, h); }, "share memory"));
  CHECK(throws_containing([&] { prism::sgd_update_(prism::arange(6, DType::i64), g, vel, h); },
                          "int64"));
  SgdHyper bad = h;
  bad.lr = -0.1;
  CHECK(throws_containing([&] { prism::sgd_update_(p, g, vel, bad); },
                          "sgd_update: lr must be a finite number >= 0, got -0.1"));
  bad = h;
  bad.lr = std::nan("");
  CHECK(throws_containing([&] { prism::sgd_update_(p, g, vel, bad); }, "lr"));
  bad = h;
  bad.momentum = 0;
  bad.nesterov = true;
  CHECK(throws_containing([&] { prism::sgd_update_(p, g, vel, bad); }, "nesterov"));

  Tensor m = prism::zeros({2, 3}, DType::f64), v = prism::zeros({2, 3}, DType::f64);
  AdamHyper ah;
  AdamHyper abad = ah;
  abad.beta1 = 1.0;
  CHECK(throws_containing([&] { prism::adam_update_(p, g, m, v, abad); }, "beta1"));
  abad = ah;
  abad.step = 0;
  CHECK(throws_containing([&] { prism::adam_update_(p, g, m, v, abad); }, "step"));
  abad = ah;
  abad.eps = -1;
  CHECK(throws_containing([&] { prism::adam_update_(p, g, m, v, abad); }, "eps"));
  CHECK(throws_containing([&] { prism::adam_update_(p, g, m, m, ah); }, "m and v share memory"));
  CHECK(throws_containing([&] { prism::adam_update_(p, g, m, prism::zeros({6}, DType::f64), ah); },
                          "v has shape [6]"));
  // Nothing above changed a value.
  check_close(p, {1, 2, 3, 4, 5, 6});
  check_close(vel, {0, 0, 0, 0, 0, 0});
  check_close(m, {0, 0, 0, 0, 0, 0});
  check_close(v, {0, 0, 0, 0, 0, 0});
  // With momentum 0 the velocity is not needed.
  SgdHyper plain;
  plain.lr = 1;
  prism::sgd_update_(p, g, Tensor(), plain);
  check_close(p, {0, 1, 2, 3, 4, 5});
}

TEST_CASE("optimizers refuse bad parameters and hyperparameters") {
  Tensor p = leaf({1.0, 2.0});
  CHECK(throws_containing([&] { SGD({p}, -0.1); }, "SGD: lr must be a finite number >= 0"));
  CHECK(throws_containing([&] { SGD({p}, 0.1, -0.5); }, "momentum"));
  CHECK(throws_containing([&] { SGD({p}, 0.1, 0.0, -1.0); }, "weight_decay"));
  CHECK(throws_containing([&] { SGD({p}, 0.1, 0.0, 0.0, true); }, "nesterov needs momentum"));
  CHECK(throws_containing([&] { Adam({p}, 0.1, {0.9, 1.0}); }, "Adam: beta2"));
  CHECK(throws_containing([&] { Adam({p}, 0.1, {-0.1, 0.9}); }, "beta1"));
  CHECK(throws_containing([&] { AdamW({p}, 0.1, {}, 1e-8, -0.1); }, "AdamW: weight_decay"));
  CHECK(throws_containing([&] { SGD({}, 0.1); }, "empty parameter list"));
  CHECK(throws_containing([&] { SGD({Tensor()}, 0.1); }, "undefined"));
  CHECK(throws_containing([&] { SGD({p, p}, 0.1); }, "more than once"));
  CHECK(throws_containing([&] { SGD({prism::ones({2})}, 0.1); }, "does not require grad"));
  CHECK(throws_containing([&] { SGD({p * 2.0}, 0.1); }, "not a leaf"));
  Tensor nc = prism::zeros({3, 2}, DType::f64).t().detach();
  nc.set_requires_grad();
  CHECK(throws_containing([&] { SGD({nc}, 0.1); }, "not contiguous"));

  SGD opt({p}, 0.1);
  CHECK(throws_containing([&] { opt.set_lr(-1); }, "lr"));
  CHECK(opt.lr() == 0.1);
  opt.set_lr(0.5);
  CHECK(opt.lr() == 0.5);
}

TEST_CASE("a refused step updates no parameter") {
  Tensor a = leaf({1.0, 2.0});
  Tensor b = leaf({3.0, 4.0});
  SGD opt({a, b}, 0.1, 0.9);
  set_grad(a, {1.0, 1.0});
  b.impl().grad = prism::ones({2}, DType::f32).impl_ptr();  // wrong dtype for b
  CHECK(throws_containing([&] { opt.step(); },
                          "SGD: parameter 1 [2] float64 on cpu has a gradient [2] float32"));
  check_close(a, {1.0, 2.0});
  check_close(b, {3.0, 4.0});
  CHECK(opt.step_count() == 0);
  // State that no longer matches its parameter (converted after the first step) is refused too.
  set_grad(b, {1.0, 1.0});
  opt.step();
  b.impl().dtype = DType::f32;  // what a conversion in place would leave behind
  b.impl().grad = prism::ones({2}, DType::f32).impl_ptr();
  b.impl().storage = prism::ones({2}, DType::f32).storage();
  CHECK(throws_containing([&] { opt.step(); }, "no longer matches its velocity"));
}

// ---- LR schedules ------------------------------------------------------------------------------

TEST_CASE("StepLR multiplies by gamma every step_size steps, after an optional warmup") {
  Tensor p = leaf({1.0});
  SGD opt({p}, 1.0);
  StepLR sched(opt, 2, 0.5);
  CHECK(sched.base_lr() == 1.0);
  const std::vector<double> expect = {1, 1, 0.5, 0.5, 0.25, 0.25, 0.125};
  for (size_t s = 0; s < expect.size(); ++s) {
    INFO("step " << s);
    CHECK(sched.lr_at(static_cast<int64_t>(s)) == doctest::Approx(expect[s]).epsilon(1e-15));
  }
  // Construction set step 0's lr; each step() sets the next.
  CHECK(opt.lr() == 1.0);
  for (size_t s = 1; s < expect.size(); ++s) {
    CHECK(sched.step() == doctest::Approx(expect[s]).epsilon(1e-15));
    CHECK(opt.lr() == doctest::Approx(expect[s]).epsilon(1e-15));
  }
  CHECK(sched.current_step() == static_cast<int64_t>(expect.size()) - 1);

  SGD opt2({p}, 0.4);
  StepLR warm(opt2, 2, 0.5, 4);
  // Warmup over 4 steps: 0.4 (s + 1) / 4, then the curve from its start.
  const std::vector<double> expect2 = {0.1, 0.2, 0.3, 0.4, 0.4, 0.4, 0.2, 0.2, 0.1};
  CHECK(opt2.lr() == doctest::Approx(0.1));
  for (size_t s = 0; s < expect2.size(); ++s) {
    INFO("step " << s);
    CHECK(warm.lr_at(static_cast<int64_t>(s)) == doctest::Approx(expect2[s]).epsilon(1e-15));
  }
}

TEST_CASE("CosineAnnealing follows half a cosine to eta_min and stays there") {
  Tensor p = leaf({1.0});
  Adam opt({p}, 1.0);
  CosineAnnealing sched(opt, 4, 0.1);
  const double c = std::cos(std::numbers::pi / 4);  // 0.7071...
  const std::vector<double> expect = {
      1.0, 0.1 + 0.9 * (1 + c) / 2, 0.55, 0.1 + 0.9 * (1 - c) / 2, 0.1, 0.1, 0.1};
  for (size_t s = 0; s < expect.size(); ++s) {
    INFO("step " << s);
    CHECK(sched.lr_at(static_cast<int64_t>(s)) == doctest::Approx(expect[s]).epsilon(1e-15));
  }
  CHECK(sched.lr_at(2) == doctest::Approx(0.55));
  CHECK(sched.lr_at(1) == doctest::Approx(0.8681980515));
  sched.step();
  sched.step();
  CHECK(opt.lr() == doctest::Approx(0.55).epsilon(1e-15));

  SGD opt2({p}, 0.2);
  CosineAnnealing warm(opt2, 2, 0.0, 2);
  // warmup 0.1, 0.2; then cosine over 2 steps: 0.2, 0.1, 0.
  const std::vector<double> expect2 = {0.1, 0.2, 0.2, 0.1, 0.0, 0.0};
  for (size_t s = 0; s < expect2.size(); ++s) {
    INFO("step " << s);
    CHECK(warm.lr_at(static_cast<int64_t>(s)) == doctest::Approx(expect2[s]).epsilon(1e-15));
  }
  CHECK(opt2.lr() == doctest::Approx(0.1));
}

TEST_CASE("LR schedules refuse bad settings") {
  Tensor p = leaf({1.0});
  SGD opt({p}, 0.1);
  CHECK(throws_containing([&] { StepLR(opt, 0); }, "step_size"));
  CHECK(throws_containing([&] { StepLR(opt, 1, -0.5); }, "gamma"));
  CHECK(throws_containing([&] { CosineAnnealing(opt, 0); }, "t_max"));
  CHECK(throws_containing([&] { CosineAnnealing(opt, 10, -1.0); }, "eta_min"));
  CHECK(throws_containing([&] { CosineAnnealing(opt, 10, 0.0, -1); }, "warmup_steps"));
  StepLR ok(opt, 1);
  CHECK(throws_containing([&] { (void)ok.lr_at(-1); }, "step"));
  CHECK(opt.lr() == 0.1);  // refused schedules set nothing
}

// ---- cross-check against composed ops ------------------------------------------------------

TEST_CASE("sgd_update and adam_update match the same math composed from tensor ops, float64") {
  prism::NoGrad no_grad;
  const Dims shape = {7, 13};
  for (int variant = 0; variant < 4; ++variant) {
    const bool nesterov = variant & 1, decoupled = variant & 2;
    INFO("variant " << variant);
    Tensor p = prism::randn(shape, DType::f64);
    Tensor p_ref = prism::clone(p);
    Tensor vel = prism::zeros(shape, DType::f64), vel_ref = prism::zeros(shape, DType::f64);
    Tensor m = prism::zeros(shape, DType::f64), m_ref = prism::zeros(shape, DType::f64);
    Tensor v = prism::zeros(shape, DType::f64), v_ref = prism::zeros(shape, DType::f64);
    Tensor q = prism::randn(shape, DType::f64);
    Tensor q_ref = prism::clone(q);
    SgdHyper sh{0.05, 0.8, 0.01, nesterov};
    AdamHyper ah;
    ah.lr = 0.01;
    ah.beta1 = 0.8;
    ah.beta2 = 0.95;
    ah.eps = 1e-6;
    ah.weight_decay = 0.05;
    ah.decoupled = decoupled;
    for (int t = 1; t <= 3; ++t) {
      Tensor grad = prism::randn(shape, DType::f64);
      // SGD
      prism::sgd_update_(p, grad, vel, sh);
      Tensor g = grad + sh.weight_decay * p_ref;
      vel_ref = sh.momentum * vel_ref + g;
      p_ref = p_ref - sh.lr * (nesterov ? g + sh.momentum * vel_ref : vel_ref);
      // Adam / AdamW
      ah.step = t;
      prism::adam_update_(q, grad, m, v, ah);
      Tensor ga = grad;
      if (decoupled)
        q_ref = q_ref * (1 - ah.lr * ah.weight_decay);
      else
        ga = grad + ah.weight_decay * q_ref;
      m_ref = ah.beta1 * m_ref + (1 - ah.beta1) * ga;
      v_ref = ah.beta2 * v_ref + (1 - ah.beta2) * ga * ga;
      Tensor m_hat = m_ref / (1 - std::pow(ah.beta1, t));
      Tensor v_hat = v_ref / (1 - std::pow(ah.beta2, t));
      q_ref = q_ref - ah.lr * m_hat / (prism::sqrt(v_hat) + ah.eps);
    }
    check_close(p, p_ref.to_vector<double>(), 1e-14);
    check_close(vel, vel_ref.to_vector<double>(), 1e-14);
    check_close(q, q_ref.to_vector<double>(), 1e-13);
    check_close(m, m_ref.to_vector<double>(), 1e-14);
    check_close(v, v_ref.to_vector<double>(), 1e-14);
  }
}
