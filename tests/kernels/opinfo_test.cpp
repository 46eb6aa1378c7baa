// The op descriptions (kernels/opinfo): every registered op has one, and the one validation
// routine the lab uses (kernels/opinfo/validate.h) can fail. Each op's own descriptions are
// checked by its per-op test (tests/ops/opinfo_test.cpp).
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "kernels/costs.h"
#include "kernels/opinfo/op_info.h"
#include "kernels/opinfo/validate.h"
#include "kernels/ops/elementwise/args.h"
#include "kernels/registry.h"
#include "tests/test_util.h"

namespace prism::opinfo {
namespace {

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
                  " has kernels but no OpInfo: add one to its folder's opinfo.cpp");
  }
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
