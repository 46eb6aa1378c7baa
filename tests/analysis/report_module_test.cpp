// The report's module icicle and step time views (analysis/html/module_view.cpp, step_view.cpp):
// the exact rects and points placed for hand-made profiles, worked out here from the layout
// constants in profile_views.h, the notes when the data is absent, and the read errors.
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "analysis/html/profile_views.h"
#include "analysis/html/report_page.h"
#include "kernels/types.h"

namespace html = prism::analysis::html;
using nlohmann::json;

namespace {

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

size_t occurrences(const std::string& s, const std::string& part) {
  size_t n = 0;
  for (size_t at = 0; (at = s.find(part, at)) != std::string::npos; at += part.size()) ++n;
  return n;
}

json base_profile() {
  return json{{"meta", {{"threads", 1}}},
              {"ops", json::array()},
              {"memory", {{"peak_live_bytes", {{"cpu", 0}}}, {"samples", 0}}}};
}

json module(const std::string& path, int depth, double fwd_ms, double bwd_ms, double opt_ms = 0) {
  return json{{"path", path},           {"depth", depth},         {"calls", 3},
              {"fwd_ns", fwd_ms * 1e6}, {"bwd_ns", bwd_ms * 1e6}, {"opt_ns", opt_ms * 1e6}};
}

// Three modules and the ops outside them. Forward: model 4 ms (fc 1, the long-named block 2, its
// own ops 1) and 1 ms outside, 5 ms in all; backward: model 10 ms (fc 4, block 5), 0 outside.
// The scale is [0, 10] ms onto [90, 880]: 79 px a millisecond.
json three_modules() {
  json doc = base_profile();
  json fc = module("model.fc", 2, 1, 4);
  fc["type"] = "Linear";
  fc["fwd_flops"] = 1e6;
  doc["modules"] = json::array({module("", 0, 1, 0), module("model", 1, 4, 10), fc,
                                module("model.a_rather_long_block_name", 2, 2, 5)});
  return doc;
}

std::string rect(double x, double y, double w, const char* cls) {
  return "<rect x=\"" + html::num(x) + "\" y=\"" + html::num(y) + "\" width=\"" + html::num(w) +
         "\" height=\"20\" class=\"" + cls + "\">";
}

}  // namespace

TEST_CASE("module icicle: widths proportional to time, children inside their parent") {
  const html::ProfileData p = html::read_profile(three_modules());
  REQUIRE(p.has_modules);
  REQUIRE(p.modules.size() == 4);
  CHECK(p.modules[2].name == "fc");  // the last path component, the file giving none
  CHECK(p.modules[2].type == "Linear");
  const html::Scale x = html::module_scale(p);
  CHECK(x.d0 == 0);
  CHECK(x.d1 == 10);
  CHECK(x(1) - x(0) == doctest::Approx(79));

  const html::Section s = html::module_view(p);
  CHECK(s.title == "Module icicle");
  const std::string& b = s.body;
  // Forward icicle, rows at y 10 (depth 1) and 32 (depth 2).
  CHECK(has(b, rect(90, 10, 316, "fwd")));    // model: 4 ms
  CHECK(has(b, rect(90, 32, 79, "fwd")));     // model.fc: 1 ms, at the parent's left edge
  CHECK(has(b, rect(169, 32, 158, "fwd")));   // the block: 2 ms, after fc; 1 ms of model left
  CHECK(has(b, rect(406, 10, 79, "other")));  // outside every module: 1 ms, after model
  // Backward icicle below: top 10 + 2 rows of 22 + a 26 px gap = 80.
  CHECK(has(b, rect(90, 80, 790, "bwd")));    // model: 10 ms, the whole scale
  CHECK(has(b, rect(90, 102, 316, "bwd")));   // fc: 4 ms
  CHECK(has(b, rect(406, 102, 395, "bwd")));  // the block: 5 ms, to model's right edge
  CHECK(occurrences(b, "<rect ") == 7);       // no rect for the 0 ms outside in backward
  CHECK_FALSE(has(b, "class=\"opt\""));       // no optimizer time, no optimizer icicle
  // The x axis under both: 80 + 44 + 4.
  CHECK(has(b, "<line x1=\"90\" y1=\"128\" x2=\"880\" y2=\"128\" class=\"axis\"/>"));
  CHECK(has(b, "viewBox=\"0 0 900 172\""));

  // Labels sit inside when the name fits (6.6 px a character + 8): "model" in 316 px, the
  // 24-character block name (166.4 px) in its 395 px backward rect but not its 158 px forward one.
  CHECK(has(b, "<text x=\"94\" y=\"24\">"));
  CHECK(has(b, "</title>(outside)</text>"));
  CHECK(occurrences(b, "</title>a_rather_long_block_name</text>") == 1);
  CHECK(has(b, "<text x=\"410\" y=\"116\">"));  // the backward one
  CHECK_FALSE(has(b, "<text x=\"173\" y=\"46\">"));
  CHECK(occurrences(b, "</title>fc</text>") == 2);  // 1 ms = 79 px holds "fc"

  // Tooltips: path, type, calls, ms and share of the phase's total.
  CHECK(has(b,
            "<title>model.fc (Linear), 3 calls\nforward 1.000 ms (20.0% of forward), 1e+06 "
            "FLOP\nbackward 4.000 ms (40.0% of backward)</title>"));
  CHECK(has(b, "<title>forward total 5.000 ms</title>forward</text>"));
  CHECK(has(b, "<title>backward total 10.000 ms</title>backward</text>"));
}

TEST_CASE("module icicle: optimizer time gets its own icicle, the only one when alone") {
  json doc = base_profile();
  doc["modules"] = json::array({module("SGD", 1, 0, 0, 5)});
  const html::Section s = html::module_view(html::read_profile(doc));
  CHECK(has(s.body, rect(90, 10, 790, "opt")));  // 5 ms over a [0, 5] scale
  CHECK(occurrences(s.body, "<rect ") == 1);
  CHECK(has(s.body, "</title>optimizer</text>"));
}

TEST_CASE("module icicle: recompute time (activation checkpointing) gets its own icicle") {
  json doc = base_profile();
  json block = module("model", 1, 2, 4);
  block["rec_ns"] = 2e6;
  block["rec_flops"] = 3e6;
  doc["modules"] = json::array({block});
  const html::ProfileData p = html::read_profile(doc);
  REQUIRE(p.modules.size() == 1);
  CHECK(p.modules[0].rec_ns == 2e6);
  CHECK(p.modules[0].rec_flops == 3e6);
  const html::Section s = html::module_view(p);
  CHECK(has(s.body, "</title>recompute</text>"));
  CHECK(has(s.body, "class=\"rec\""));  // its own colour class, and in the legend
  CHECK(has(s.body, "<i class=\"rec\"></i>recompute"));
  CHECK(has(s.body, "recompute 2.000 ms"));  // the tooltip
  CHECK(std::string(html::phase_class("recompute")) == "rec");
}

TEST_CASE("module icicle: communication time (data-parallel sync) gets its own icicle") {
  json doc = base_profile();
  json block = module("model", 1, 2, 4);
  block["comm_ns"] = 3e6;
  doc["modules"] = json::array({block});
  const html::ProfileData p = html::read_profile(doc);
  REQUIRE(p.modules.size() == 1);
  CHECK(p.modules[0].comm_ns == 3e6);
  CHECK(html::read_profile(three_modules()).modules[1].comm_ns == 0);  // older files: none
  const html::Section s = html::module_view(p);
  CHECK(has(s.body, "</title>communication</text>"));
  CHECK(has(s.body, "class=\"comm\""));
  CHECK(has(s.body, "<i class=\"comm\"></i>communication"));
  CHECK(has(s.body, "communication 3.000 ms"));  // the tooltip
  CHECK(std::string(html::phase_class("communication")) == "comm");
}

TEST_CASE("module icicle: a note for an older profile and for one with no time") {
  const html::Section old = html::module_view(html::read_profile(base_profile()));
  CHECK(has(old.body, "class=\"note\""));
  CHECK(has(old.body, "no module tree"));
  CHECK_FALSE(has(old.body, "<svg"));

  json doc = base_profile();
  doc["modules"] = json::array({module("model", 1, 0, 0)});
  const html::Section idle = html::module_view(html::read_profile(doc));
  CHECK(has(idle.body, "No op time was recorded"));
  CHECK_FALSE(has(idle.body, "<svg"));
}

TEST_CASE("module icicle: bad modules are refused, naming the field") {
  auto error_of = [](const json& doc) {
    try {
      html::read_profile(doc);
    } catch (const prism::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  json doc = base_profile();
  doc["modules"] = 3;
  CHECK(error_of(doc) == "modules: expected an array");
  doc["modules"] = json::array({module("model", 1, 1, 1), module("other.fc", 2, 1, 1)});
  CHECK(error_of(doc) == "modules[1].path: \"other.fc\" at depth 2 has no parent listed before it");
  doc["modules"] = json::array({module("model", 1, 1, 1)});
  doc["modules"][0].erase("bwd_ns");
  CHECK(error_of(doc) == "modules[0].bwd_ns: missing");
  doc["modules"][0]["bwd_ns"] = -1;
  CHECK(error_of(doc) == "modules[0].bwd_ns: expected a number >= 0");
  doc = base_profile();
  doc["train"] = {{"step_samples_ms", {1.0, "x"}}};
  CHECK(error_of(doc) == "train.step_samples_ms[1]: expected a number >= 0");
  doc["train"] = {{"step_samples_ms", 2}};
  CHECK(error_of(doc) == "train.step_samples_ms: expected an array of ms per step");
}

TEST_CASE("step time: one point per step, the median line and the profiled window") {
  json doc = base_profile();
  doc["train"] = {
      {"model", "mlp"}, {"profiled_steps", {2, 4}}, {"step_samples_ms", {4, 2, 3, 1, 2}}};
  const html::ProfileData p = html::read_profile(doc);
  REQUIRE(p.step_ms.size() == 5);
  const auto [x, y] = html::step_scales(p);
  // x: steps [0, 5] onto [80, 860], 156 px a step; y: [0, 4] ms onto [240, 20], 55 px a ms.
  CHECK(x.d1 == 5);
  CHECK(y.d1 == 4);
  const std::optional<html::Section> s = html::step_view(p);
  REQUIRE(s);
  CHECK(s->title == "Step time");
  const std::string& b = s->body;
  CHECK(has(b, "points=\"236,20 392,130 548,75 704,185 860,130\" class=\"roof\""));
  CHECK(has(b,
            "<circle cx=\"236\" cy=\"20\" r=\"2.5\" class=\"fwd\"><title>step 1: 4.000 ms"
            "</title></circle>"));
  CHECK(has(b,
            "<circle cx=\"392\" cy=\"130\" r=\"2.5\" class=\"fwd\"><title>step 2: 2.000 ms "
            "(profiled)</title></circle>"));
  CHECK(occurrences(b, "<circle ") == 5);
  // Steps 2-4 shaded half a step either side: x(1.5) = 314 to x(4.5) = 782.
  CHECK(has(b, "<rect x=\"314\" y=\"20\" width=\"468\" height=\"220\" class=\"area\">"));
  // The median of {1, 2, 2, 3, 4} is 2: a line at y 130 across the plot.
  CHECK(has(b,
            "<line x1=\"80\" y1=\"130\" x2=\"860\" y2=\"130\" class=\"ridge\">"
            "<title>median 2.000 ms</title>"));

  // An even count: the mean of the two middle steps; no window without profiled_steps.
  doc["train"] = {{"step_samples_ms", {1, 3}}};
  const std::optional<html::Section> even = html::step_view(html::read_profile(doc));
  REQUIRE(even);
  CHECK(has(even->body, "<title>median 2.000 ms</title>"));
  CHECK_FALSE(has(even->body, "class=\"area\""));
}

TEST_CASE("profile sections: the icicle always, the step time only with a train block") {
  json doc = three_modules();
  std::vector<html::Section> s = html::profile_sections(html::read_profile(doc), {});
  REQUIRE(s.size() == 4);
  CHECK(s[3].title == "Module icicle");
  CHECK_FALSE(html::step_view(html::read_profile(doc)));

  doc["train"] = {{"model", "mlp"}, {"step_samples_ms", {1, 2}}};
  s = html::profile_sections(html::read_profile(doc), {});
  REQUIRE(s.size() == 5);
  CHECK(s[0].title == "Op breakdown");
  CHECK(s[1].title == "Roofline");
  CHECK(s[3].title == "Module icicle");
  CHECK(s[4].title == "Step time");

  doc["train"] = {{"model", "mlp"}};  // a train block with no step times: no view
  CHECK(html::profile_sections(html::read_profile(doc), {}).size() == 4);
}
