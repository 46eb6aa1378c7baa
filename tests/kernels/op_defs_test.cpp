// The op definitions (kernels/op_def.h, one op.h per folder under kernels/ops/): one for every
// registered op and a registered op for every definition, the defaults they name in force, the
// classes, and docs/COSTS.md's "Every op in one line" table generated from them.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "kernels/ops/elementwise/op.h"
#include "kernels/op_def.h"
#include "kernels/ops/matmul_bf16/op.h"
#include "kernels/ops/rms_norm/op.h"
#include "kernels/registry.h"

namespace prism::kernels {
namespace {

// The table as docs/COSTS.md shows it; '*' escaped so Markdown does not read 2*m*n as italics.
std::string formula_table_markdown() {
  std::string md = "| op | FLOPs, MACs and bytes per call |\n|---|---|\n";
  for (const OpDef* d : op_defs()) {
    std::string text;
    for (char c : std::string_view(d->cost_formula)) {
      if (c == '*') text += '\\';
      text += c;
    }
    md += "| `" + std::string(d->name) + "` | " + text + " |\n";
  }
  return md;
}

TEST_CASE("op definitions: one for every registered op, and kernels for every definition") {
  const auto& defs = op_defs();
  CHECK(std::is_sorted(defs.begin(), defs.end(), [](const OpDef* a, const OpDef* b) {
    return std::string_view(a->name) < b->name;
  }));
  std::set<std::string, std::less<>> registered;
  for (const OpKernels* k : registry().all()) {
    if (k->entries().front().tag == VariantTag::user) continue;  // a test file's own op
    registered.insert(k->op());
  }
  for (const std::string& op : registered) {
    const OpDef* d = find_op_def(op);
    REQUIRE_MESSAGE(d != nullptr, op, " is registered and has no definition under kernels/ops/");
    CHECK(d->name == op);
    CHECK_MESSAGE(!std::string_view(d->cost_formula).empty(), op, " has no cost formula");
  }
  for (const OpDef* d : defs) {
    // Every op with kernels has CPU kernels (the GPU may lack some: linear, the int8 path).
    CHECK_MESSAGE(registered.count(d->name) == size_t(d->has_kernels), d->name,
                  d->has_kernels ? " is defined and has no CPU kernels"
                                 : " has no kernels by its definition, yet some are registered");
    if (!d->has_kernels) CHECK_MESSAGE(!d->cpu.variant, d->name, ": a default with no kernels");
  }
  CHECK(find_op_def("no_such_op") == nullptr);
  CHECK(find_op_def(ops::rms_norm.name) == &ops::rms_norm);
}

TEST_CASE("op definitions: each names a default its op has, and that default is in force") {
  for (const OpDef* d : op_defs()) {
    for (Device dev : {Device::cpu, Device::cuda}) {
      const DefaultVariant& dv = d->default_on(dev);
      if (dv.variant) CHECK_MESSAGE(std::string_view(dv.why).size() > 10, d->name, ": no reason");
      const OpKernels* k = registry().find(d->name, dev);
      if (!k || !dv.variant) continue;
      const KernelEntry& e = k->default_entry();
      // The named default, or the variant it hands over to where its hardware is absent.
      const bool hands_over =
          dv.without_its_hardware && !k->at(dv.variant).runs_instead_note().empty();
      CHECK_MESSAGE(e.name == (hands_over ? dv.without_its_hardware : dv.variant), d->name, " on ",
                    device_name(dev));
    }
  }
}

TEST_CASE("op definitions: a default whose hardware is missing is not the default") {
  const OpKernels& k = registry().at(ops::matmul_bf16.name, Device::cpu);
  const bool amx_runs = k.at("amx").runs_instead_note().empty();
  CHECK(k.default_entry().name == (amx_runs ? "amx" : "optimized"));
}

TEST_CASE("op definitions: a definition naming a variant the op lacks is an error naming both") {
  static constexpr OpDef bad{.name = "op_defs_test_bad",
                             .cost_formula = "1",
                             .cpu = {.variant = "nosuch", .why = "a test of the error"}};
  Registry r;  // a private registry and a private list: the process's stay as they are
  r.op("op_defs_test_bad", Device::cpu)
      .add<UnaryArgs>("naive", VariantTag::naive, "a loop", [](const UnaryArgs<float>&) {});
  CHECK_THROWS_WITH_AS(r.set_defaults(Device::cpu, {&bad}),
                       doctest::Contains("op_defs_test_bad's definition makes 'nosuch' its cpu "
                                         "default, and no such variant is registered (naive)"),
                       Error);
}

TEST_CASE("cost formulas: elementwise steps come from one table") {
  CHECK(costs::elementwise_steps("add") == 1);
  CHECK(costs::elementwise_steps("gelu") == 8);
  CHECK(costs::elementwise_steps("gelu_backward") == 16);
  CHECK(costs::elementwise_steps("sigmoid") == 3);
  CHECK(costs::elementwise_steps("silu") == 4);  // sigmoid 3 + the multiply
  CHECK(costs::elementwise_steps("silu_backward") == 8);
  CHECK_THROWS_WITH_AS(costs::elementwise_steps("matmul"),
                       doctest::Contains("'matmul' is not an elementwise op"), Error);
}

TEST_CASE("cost formulas: docs/COSTS.md shows the table generated from the definitions") {
  std::ifstream in(std::string(PRISM_SOURCE_DIR) + "/docs/COSTS.md");
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  const std::string begin = "<!-- generated from the op definitions, kernels/ops/*/op.h -->\n";
  const std::string end = "<!-- end of the generated table -->";
  const size_t b = doc.find(begin), e = doc.find(end);
  REQUIRE_MESSAGE(b != std::string::npos, "docs/COSTS.md lacks the line ", begin);
  REQUIRE(e != std::string::npos);
  const std::string expected = formula_table_markdown();
  CHECK_MESSAGE(doc.substr(b + begin.size(), e - b - begin.size()) == expected,
                "docs/COSTS.md's table differs from the op definitions; it should read:\n",
                expected);
}

}  // namespace
}  // namespace prism::kernels
