// The view of a `prism gate --json` result in `prism report`: the verdict, then one row per
// check, a green square for a check that held and a vermillion one for a check that broke, with
// the measured change against its limit as `prism gate` printed it. Reads
//   {"kind": "prism.gate", "passed", "base", "cand",
//    "checks": [{"series", "what", "passed", "detail"}]}   (analysis/gate.h, gate_json)
#include <string>

#include <fmt/format.h>

#include "analysis/html/json_fields.h"
#include "analysis/html/result_views.h"
#include "analysis/html/svg.h"
#include "kernels/types.h"

namespace prism::analysis::html {
namespace {

constexpr double kRow = 22;  // pixels per check

Block gate_block(const std::string& name, const nlohmann::json& doc) {
  const bool passed = fields::flag(doc, "passed", "");
  const nlohmann::json& checks = fields::field(doc, "checks", "");
  if (!checks.is_array()) throw Error("checks: expected an array");

  Svg svg(900, 10 + kRow * static_cast<double>(checks.size()), "the gate's checks");
  int broken = 0;
  for (size_t i = 0; i < checks.size(); ++i) {
    const std::string path = fmt::format("checks[{}].", i);
    const nlohmann::json& c = checks[i];
    const bool ok = fields::flag(c, "passed", path);
    const std::string series = fields::text(c, "series", path),
                      what = fields::text(c, "what", path),
                      detail = fields::text(c, "detail", path);
    broken += ok ? 0 : 1;
    const double y = 5 + kRow * static_cast<double>(i);
    const std::string line = fmt::format("{} {}{}{}: {}", ok ? "PASS" : "FAIL", series,
                                         series.empty() ? "" : " ", what, detail);
    svg.rect(0, y + 3, 14, 14, ok ? "opt" : "bwd", line);
    svg.text(22, y + 15, line, "");
  }

  Block blk;
  blk.heading = name;
  blk.subheading = fmt::format("gate {} against {}", fields::text(doc, "cand", ""),
                               fields::text(doc, "base", ""));
  Section s;
  s.title = passed ? "Gate: passed" : "Gate: failed";
  s.how_to_read =
      "One row per threshold the candidate was held to: green held, vermillion broke. A time "
      "counts as broken only when it is over its limit and the change is statistically "
      "significant; the figures are the candidate's change against the baseline.";
  s.body = note(passed ? fmt::format("Every one of the {} checks held.", checks.size())
                       : fmt::format("{} of the {} checks broke.", broken, checks.size())) +
           legend({{"opt", "held"}, {"bwd", "broke"}}) + svg.str();
  blk.sections.push_back(std::move(s));
  return blk;
}

const ResultView registered("prism.gate", &gate_block);

}  // namespace
}  // namespace prism::analysis::html
