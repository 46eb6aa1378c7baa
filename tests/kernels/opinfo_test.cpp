// The op descriptions (kernels/opinfo): every CPU variant of every op agrees with the op's
// baseline on every sample of its description, through the one validation routine the lab
// uses (kernels/opinfo/validate.h). The list of variants comes from the registry, so a variant
// added later (a fused kernel, a learner's) is checked without editing this file; an op without
// a description fails here.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "kernels/costs.h"
#include "kernels/opinfo/op_info.h"
#include "kernels/opinfo/validate.h"
#include "kernels/registry.h"
#include "tests/test_util.h"

namespace prism::opinfo {
namespace {

bool deliberately_wrong(const kernels::KernelEntry& e) {
  // lab_test.cpp registers wrong kernels ("wrong_...") to show the lab catches them; they stay
  // registered when the whole suite runs in one process.
  return e.name.rfind("wrong_", 0) == 0;
}

TEST_CASE("opinfo: every registered op has exactly one description") {
  std::set<std::string> described;
  for (const OpInfo& op : op_infos()) {
    CHECK_MESSAGE(described.insert(op.op).second, op.op, " is described twice");
    CHECK_MESSAGE(kernels::registry().find(op.op, Device::cpu) != nullptr, op.op,
                  " is described but has no CPU kernels");
  }
  for (const kernels::OpKernels* k : kernels::registry().all()) {
    if (k->device() != Device::cpu || std::string_view(k->cost_formula()).empty()) continue;
    CHECK_MESSAGE(described.count(k->op()) == 1, k->op(),
                  " has kernels but no OpInfo in kernels/opinfo/: add one");
  }
}

TEST_CASE("opinfo: every description is complete") {
  for (const OpInfo& op : op_infos()) {
    INFO(prism::testing::info_text("op ", op.op));
    CHECK_FALSE(op.summary.empty());
    CHECK_FALSE(op.size_syntax.empty());
    CHECK_FALSE(op.default_sizes.empty());
    CHECK(op.validation_sizes.size() >= 3);  // at least size 1, an odd shape and a larger one
    CHECK(op.tolerance > 0);
    CHECK(op.tolerance <= 1e-3);
    CHECK_MESSAGE(op.tolerance_why.size() > 20, "say why the tolerance is what it is");
    // Every sample is a valid size, and its cost is the op's formula: bytes are never zero.
    for (const std::string& size : op.validation_sizes) {
      INFO(prism::testing::info_text("size ", size));
      auto c = op.make(size, 1);
      CHECK(c->cost().bytes > 0);
      CHECK_FALSE(c->outputs().empty());
    }
    CHECK_THROWS_AS(op.make("0x", 1), Error);  // a bad size names the syntax
  }
}

TEST_CASE("opinfo: every CPU variant agrees with its baseline on every sample") {
  int comparisons = 0;
  for (const OpInfo& op : op_infos()) {
    const kernels::OpKernels& k = kernels::registry().at(op.op, Device::cpu);
    const kernels::KernelEntry& baseline = baseline_of(k);
    uint64_t seed = 100;
    for (const kernels::KernelEntry& e : k.entries()) {
      if (&e == &baseline || !e.has(DType::f32) || deliberately_wrong(e)) continue;
      for (const std::string& size : op.validation_sizes) {
        const ValidationCheck c = validate_variant(op, e, baseline, size, ++seed);
        INFO(prism::testing::info_text(op.op, " [", e.name, " vs ", baseline.name, "] size ", size,
                                       ": error ", c.error, " (tolerance ", op.tolerance, ") ",
                                       c.what));
        CHECK(c.ok);
        ++comparisons;
      }
    }
  }
  CHECK(comparisons > 100);
}

TEST_CASE("opinfo: the validation can fail: a kernel that skips an element is caught") {
  const OpInfo& op = find_op_info("relu");
  const kernels::KernelEntry& naive = kernels::registry().at("relu", Device::cpu).at("naive");
  kernels::Registry private_registry;
  auto skips_last = +[](const kernels::UnaryArgs<float>& a) {
    kernels::UnaryArgs<float> b = a;
    b.numel -= 1;
    b.layout.shape[b.layout.ndim - 1] -= 1;  // a contiguous size arrives as one dim
    kernels::registry().at("relu", Device::cpu).at("naive").get<kernels::UnaryArgs, float>()(b);
  };
  kernels::KernelEntry& wrong =
      private_registry.op("relu", Device::cpu)
          .add<kernels::UnaryArgs>("skips_last", kernels::VariantTag::user, "test", skips_last);
  const ValidationCheck c = validate_variant(op, wrong, naive, "4099", 1);
  CHECK_FALSE(c.ok);
  CHECK(c.what.find("unwritten") != std::string::npos);
  CHECK(validate_variant(op, naive, naive, "4099", 1).ok);
}

}  // namespace
}  // namespace prism::opinfo
