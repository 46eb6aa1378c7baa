// optim's drivers for the variants and determinism tests (tests/ops/drivers.h; compiled into
// the per-op test suite only): the optimizer updates, returning the updated parameter and state.
#include "tests/ops/drivers.h"
#include "kernels/registry.h"
#include "tensor/ops.h"
#include "tensor/optim_ops.h"

namespace prism::kernels {
namespace {

const DriverFile kDrivers([](DriverTable& d) {
  auto state = [](DType dt, ref::Rng& rng, bool) {
    return std::vector<Tensor>{input({1037}, false, dt, rng), input({1037}, false, dt, rng),
                               input({1037}, false, dt, rng, -0.1, 0.1),
                               input({1037}, false, dt, rng, 0, 0.01)};
  };
  for (double wd : {0.0, 0.01}) {
    for (bool decoupled : {false, true}) {
      d["adam_update"].push_back({state, [wd, decoupled](const std::vector<Tensor>& in) {
                                    AdamHyper h;
                                    h.weight_decay = wd;
                                    h.decoupled = decoupled;
                                    h.step = 3;
                                    Tensor p = in[0].clone(), m = in[2].clone(), v = in[3].clone();
                                    adam_update_(p, in[1], m, v, h);
                                    return concat({p, m, v});
                                  }});
    }
    for (bool nesterov : {false, true}) {
      d["sgd_update"].push_back({state, [wd, nesterov](const std::vector<Tensor>& in) {
                                   SgdHyper h;
                                   h.lr = 0.05;
                                   h.weight_decay = wd;
                                   h.momentum = 0.9;
                                   h.nesterov = nesterov;
                                   Tensor p = in[0].clone(), vel = in[2].clone();
                                   sgd_update_(p, in[1], vel, h);
                                   return concat({p, vel});
                                 }});
    }
  }
});

// An Adam step through `variant` on 300007 parameters (past the optimizer's grain), with
// weight decay as L2 (its gradient temporary) or decoupled (AdamW).
ThreadCase adam_case(const char* variant, bool decoupled, uint64_t seed) {
  return {std::string("adam_update, ") + variant + (decoupled ? ", decoupled" : ", L2"),
          {"adam_update"},
          [=] {
            kernels::Use use("adam_update", variant);
            manual_seed(seed);
            Tensor p = randn({300007}), g = randn({300007});
            Tensor m = zeros({300007}), v = zeros({300007});
            AdamHyper h;
            h.weight_decay = 0.01;
            h.decoupled = decoupled;
            adam_update_(p, g, m, v, h);
            return std::vector<Tensor>{p, m, v};
          }};
}

// An SGD step with momentum through `variant`; every_pass adds weight decay and Nesterov.
ThreadCase sgd_case(const char* variant, bool every_pass, uint64_t seed) {
  return {std::string("sgd_update, ") + variant + (every_pass ? ", decay and Nesterov" : ""),
          {"sgd_update"},
          [=] {
            kernels::Use use("sgd_update", variant);
            manual_seed(seed);
            Tensor p = randn({300007}), g = randn({300007});
            Tensor vel = every_pass ? randn({300007}) : zeros({300007});
            SgdHyper h;
            h.momentum = 0.9;
            if (every_pass) {
              h.weight_decay = 0.01;
              h.nesterov = true;
            }
            sgd_update_(p, g, vel, h);
            return std::vector<Tensor>{p, vel};
          }};
}

// The determinism test's cases (tests/ops/determinism_test.cpp): sizes past the kernels'
// grains, so the work really splits over the threads.
const ThreadCaseFile kThreadCases("optim", [](std::vector<ThreadCase>& c) {
  // Optimizer updates, in place: the fused loops, and the per-tensor (unfused) updates, every
  // pass split on its own.
  c.push_back(adam_case("fused", true, 16));
  c.push_back(sgd_case("fused", false, 17));
  c.push_back(adam_case("per_tensor", false, 23));
  c.push_back(adam_case("per_tensor", true, 24));
  c.push_back(sgd_case("per_tensor", true, 25));
});

}  // namespace
}  // namespace prism::kernels
