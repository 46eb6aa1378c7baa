// An op folder's descriptions (its opinfo.cpp), in its per-op test (tests/ops/per_op.h): each is
// complete, and every CPU variant agrees with the op's baseline on every sample, through the one
// validation routine the lab uses (kernels/opinfo/validate.h). The list of variants comes from the
// registry, so a variant added later (a fused kernel, a learner's) is checked without editing
// this file.
#include <doctest/doctest.h>

#include <string>

#include "kernels/opinfo/op_info.h"
#include "kernels/opinfo/validate.h"
#include "kernels/registry.h"
#include "tests/ops/per_op.h"
#include "tests/test_util.h"

namespace prism::opinfo {
namespace {

TEST_CASE("opinfo: every description is complete") {
  for (const OpInfo& op : op_infos()) {
    if (!prism::testing::op_selected(op.op)) continue;
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
  int comparisons = 0, ops = 0;
  for (const OpInfo& op : op_infos()) {
    if (!prism::testing::op_selected(op.op)) continue;
    ++ops;
    const kernels::OpKernels& k = kernels::registry().at(op.op, Device::cpu);
    const kernels::KernelEntry& baseline = baseline_of(k);
    uint64_t seed = 100;
    for (const kernels::KernelEntry& e : k.entries()) {
      if (&e == &baseline || !e.has(DType::f32)) continue;
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
  // Over every op, some hundreds; a folder's op with one variant compares none.
  if (ops == static_cast<int>(op_infos().size())) CHECK(comparisons > 100);
}

}  // namespace
}  // namespace prism::opinfo
