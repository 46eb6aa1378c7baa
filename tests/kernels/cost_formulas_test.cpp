// Every op's cost formula in words (kernels/cost_formulas.cpp): one line for each registered op,
// the table in name order, and docs/COSTS.md's "Every op in one line" table generated from it.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "kernels/costs.h"
#include "kernels/registry.h"

namespace prism::kernels {
namespace {

// The table as docs/COSTS.md shows it; '*' escaped so Markdown does not read 2*m*n as italics.
std::string formula_table_markdown() {
  std::string md = "| op | FLOPs, MACs and bytes per call |\n|---|---|\n";
  for (std::string_view op : costs::ops_with_formulas()) {
    std::string text;
    for (char c : std::string_view(costs::formula(op))) {
      if (c == '*') text += '\\';
      text += c;
    }
    md += "| `" + std::string(op) + "` | " + text + " |\n";
  }
  return md;
}

TEST_CASE("cost formulas: one line for every registered op, in name order") {
  const auto names = costs::ops_with_formulas();
  CHECK(std::is_sorted(names.begin(), names.end()));
  CHECK(std::adjacent_find(names.begin(), names.end()) == names.end());
  std::set<std::string, std::less<>> registered;
  for (const OpKernels* k : registry().all()) registered.insert(k->op());
  for (const std::string& op : registered) {
    CHECK_MESSAGE(!std::string_view(costs::formula(op)).empty(), op, " has no cost formula");
  }
  for (std::string_view op : names) {
    CHECK_MESSAGE(registered.count(op) == 1, op, " has a formula but no kernels");
  }
  CHECK(std::string_view(costs::formula("no_such_op")).empty());
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

TEST_CASE("cost formulas: docs/COSTS.md shows the generated table") {
  std::ifstream in(std::string(PRISM_SOURCE_DIR) + "/docs/COSTS.md");
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  const std::string begin = "<!-- generated from kernels/cost_formulas.cpp -->\n";
  const std::string end = "<!-- end of the generated table -->";
  const size_t b = doc.find(begin), e = doc.find(end);
  REQUIRE_MESSAGE(b != std::string::npos, "docs/COSTS.md lacks the line ", begin);
  REQUIRE(e != std::string::npos);
  const std::string expected = formula_table_markdown();
  CHECK_MESSAGE(doc.substr(b + begin.size(), e - b - begin.size()) == expected,
                "docs/COSTS.md's table differs from kernels/cost_formulas.cpp; it should read:\n",
                expected);
}

}  // namespace
}  // namespace prism::kernels
