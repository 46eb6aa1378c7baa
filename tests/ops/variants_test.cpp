// Every op with more than one CPU kernel variant: each variant, run through the tensor front end
// under kernels::Use, must agree with the naive one on random odd-size inputs, contiguous and
// strided (the ggml test-backend-ops idea: a normalized error against a trusted baseline).
//
// The list of ops comes from the registry, so a variant added later (an optimized matmul, a
// fused softmax, a learner's kernel) is checked without editing this file. Each op needs a
// driver that calls it through the front end, in its folder (kernels/ops/<op>/drivers.cpp,
// tests/ops/drivers.h); an op without one fails loudly.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "tests/ops/drivers.h"
#include "tests/ops/per_op.h"
#include "tests/tensor/reference.h"

namespace prism::kernels {
namespace {

DriverTable drivers() {
  DriverTable d;
  for (const auto& add : driver_files()) add(d);
  return d;
}

// ggml's normalized mean squared error: sum (a - b)^2 / sum b^2.
double nmse(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return den == 0 ? num : num / den;
}

// How far a variant may be from the baseline: float32 kernels may sum in another order.
double max_nmse(DType dt) {
  return dt == DType::f32 ? 1e-10 : 1e-24;
}

// The CPU ops with more than one variant, which the test below compares.
std::vector<const OpKernels*> multi_variant_ops() {
  std::vector<const OpKernels*> ops;
  for (const OpKernels* k : registry().all()) {
    if (k->device() == Device::cpu && k->entries().size() >= 2) ops.push_back(k);
  }
  return ops;
}

TEST_CASE("every variant of every multi-variant op agrees with the naive one") {
  const auto table = drivers();
  int ops_checked = 0, comparisons = 0;
  for (const OpKernels* k : multi_variant_ops()) {
    const std::string op = k->op();
    if (!testing::op_selected(op)) continue;
    INFO(("op " + op));
    auto it = table.find(op);
    if (it == table.end()) {
      FAIL_CHECK(
          "op '" << op
                 << "' has several variants but no driver: add one to its folder's drivers.cpp");
      continue;
    }
    const KernelEntry* baseline = k->find("naive") ? k->find("naive") : &k->default_entry();
    ++ops_checked;
    for (DType dt : {DType::f32, DType::f64}) {
      if (!baseline->has(dt)) continue;
      for (size_t c = 0; c < it->second.size(); ++c) {
        const Driver& drv = it->second[c];
        for (bool strided : {false, true}) {
          ref::Rng rng(1000 + c);
          std::vector<Tensor> in = drv.make(dt, rng, strided);
          std::vector<double> expect;
          {
            Use use(op, baseline->name);
            expect = drv.run(in).to_vector<double>();
          }
          for (const KernelEntry& e : k->entries()) {
            if (&e == baseline || !e.has(dt)) continue;
            // lab_test.cpp registers deliberately wrong kernels ("wrong_...") to show the lab
            // catches them; they stay registered when the whole suite runs in one process.
            if (e.name.rfind("wrong_", 0) == 0) continue;
            const std::string ctx = op + " case " + std::to_string(c) + " [" + e.name + " vs " +
                                    baseline->name + "] " + dtype_name(dt) +
                                    (strided ? " strided" : " contiguous");
            INFO(ctx);
            Use use(op, e.name);
            Tensor got_t = drv.run(in);
            std::vector<double> got = got_t.to_vector<double>();
            REQUIRE(got.size() == expect.size());
            ++comparisons;
            if (got_t.dtype() == DType::i64) {
              CHECK(got == expect);  // indices must agree exactly
            } else {
              const double err = nmse(got, expect);
              INFO(("nmse " + std::to_string(err)));
              CHECK(err <= max_nmse(dt));
              bool finite = true;
              for (double v : got) finite = finite && std::isfinite(v);
              CHECK(finite);
            }
          }
        }
      }
    }
  }
  // Every multi-variant op checked was compared (a folder whose ops have one variant each
  // checks none).
  CHECK(comparisons >= ops_checked);
}

TEST_CASE("the variants check can fail: a deliberately wrong kernel is caught") {
  // A private registry entry is not run by the front end, so check the comparison itself on a
  // result that differs in one element out of many.
  std::vector<double> a(1000, 1.0), b(1000, 1.0);
  CHECK(nmse(a, b) == 0);
  a[500] = 1.01;
  CHECK(nmse(a, b) > max_nmse(DType::f32));
  a[500] = 1.0 + 1e-5;  // a float32 rounding-size difference passes
  CHECK(nmse(a, b) <= max_nmse(DType::f32));
}

}  // namespace
}  // namespace prism::kernels
