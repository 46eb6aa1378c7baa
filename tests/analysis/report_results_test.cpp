// The report's views of compare, sweep and models results (analysis/html/compare_view.cpp,
// sweep_view.cpp, models_view.cpp): the exact pixels each places for small hand-made documents,
// worked out here from the views' plot boxes, and the field path a bad document is refused with.
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "analysis/html/result_views.h"
#include "kernels/types.h"

namespace html = prism::analysis::html;
using nlohmann::json;

namespace {

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

html::Block block(const json& doc) {
  const html::BlockMaker make = html::find_result_view(doc.at("kind").get<std::string>());
  REQUIRE(static_cast<bool>(make));
  return make("r.json", doc);
}

std::string error_of(const json& doc) {
  try {
    block(doc);
  } catch (const prism::Error& e) {
    return e.what();
  }
  return "(no error)";
}

json mover(const std::string& name, double a, double b) {
  return json{
      {"name", name}, {"phase", "forward"}, {"grad_of", ""}, {"self_ns_a", a}, {"self_ns_b", b}};
}

// Baseline 100 us, candidate 150 us: matmul +40 us, relu -5 us, "tiny" +0.5 us (under 1% of the
// baseline: merged), "same" unchanged (no bar); the ops explain 35.5 us, 14.5 us is outside them.
json compare_doc() {
  return json{
      {"kind", "prism.compare"},
      {"model", "mlp"},
      {"mode", "train"},
      {"change", "kernels: matmul=naive"},
      {"report", "compare <mlp>\n"},
      {"series",
       json::array(
           {{{"label", "batch 32"},
             {"median_ns_a", 100e3},
             {"median_ns_b", 150e3},
             {"ratio", 1.5},
             {"ratio_ci", {1.4, 1.6}},
             {"p_value", 0.0002},
             {"verdict", "worse"},
             {"movers", json::array({mover("relu", 10e3, 5e3), mover("matmul", 40e3, 80e3),
                                     mover("tiny", 1e3, 1.5e3), mover("same", 2e3, 2e3)})}}})}};
}

json point(double value, double median_ns, double peak_bytes) {
  return json{{"value", value}, {"median_ns", median_ns}, {"tracked_peak_bytes", peak_bytes}};
}

json fit(double c, double k) {
  return json{{"quantity", "time"}, {"c", c}, {"k", k}, {"r2", 0.99}};
}

json model(const std::string& name, json train, json infer) {
  return json{{"model", name}, {"train", std::move(train)}, {"infer", std::move(infer)}};
}

json mode(double median_ns, double matmul_ns, double conv_ns) {
  return json{
      {"median_ns", median_ns},
      {"time_by_class",
       {{"matmul", {{"ns", matmul_ns}, {"pct", 0}}}, {"conv", {{"ns", conv_ns}, {"pct", 0}}}}}};
}

}  // namespace

TEST_CASE("report compare: a waterfall from the baseline's time to the candidate's") {
  const html::Block b = block(compare_doc());
  CHECK(b.subheading == "compare mlp (train): baseline against candidate, kernels: matmul=naive");
  REQUIRE(b.sections.size() == 2);
  const std::string body = b.sections[0].body;
  CHECK(b.sections[0].title == "Where the time moved: batch 32");
  // Six columns of 780 / 6 = 130 px from x = 80, bars 0.7 of a column, 0.15 in; y: 0 .. 150 us
  // onto 280 .. 20, so 1 us is 260 / 150 px.
  // baseline 0 .. 100 us
  CHECK(has(body,
            "<rect x=\"99.5\" y=\"106.67\" width=\"91\" height=\"173.33\" class=\"fwd\">"
            "<title>baseline: median 100 us per call</title>"));
  // matmul 100 .. 140 us (slower), the largest change first
  CHECK(has(body,
            "<rect x=\"229.5\" y=\"37.33\" width=\"91\" height=\"69.33\" class=\"bwd\">"
            "<title>matmul · forward: 40.0 us -&gt; 80.0 us per call (+40.0 us)</title>"));
  // relu 140 .. 135 us (faster)
  CHECK(has(body, "<rect x=\"359.5\" y=\"37.33\" width=\"91\" height=\"8.67\" class=\"opt\">"));
  // tiny merged: 135 .. 135.5 us
  CHECK(has(body,
            "<rect x=\"489.5\" y=\"45.13\" width=\"91\" height=\"0.87\" class=\"bwd\">"
            "<title>1 ops that moved less, together: +500 ns</title>"));
  // outside the ops: 135.5 .. 150 us
  CHECK(has(body, "<rect x=\"619.5\" y=\"20\" width=\"91\" height=\"25.13\" class=\"bwd\">"));
  CHECK(has(body, "+14.5 us"));
  // candidate 0 .. 150 us
  CHECK(has(body, "<rect x=\"749.5\" y=\"20\" width=\"91\" height=\"260\" class=\"fwd\">"));
  CHECK_FALSE(has(body, "same · forward"));  // unchanged: no step
  // The connector from the baseline's top to matmul's bottom.
  CHECK(has(body, "<line x1=\"190.5\" y1=\"106.67\" x2=\"229.5\" y2=\"106.67\" class=\"ridge\"/>"));
  CHECK(has(body,
            "Decision: <strong>worse</strong>. Candidate / baseline median time 1.500 (95% "
            "interval 1.400 to 1.600; below 1 is faster), Mann-Whitney p = 0.0002."));
  CHECK(b.sections[1].body == "<pre>compare &lt;mlp&gt;\n</pre>\n");
}

TEST_CASE("report compare: bad or missing fields are named by their path") {
  json d = compare_doc();
  d["series"][0]["movers"][1]["self_ns_b"] = "slow";
  CHECK(error_of(d) == "series[0].movers[1].self_ns_b: expected a number");
  d = compare_doc();
  d["series"][0].erase("ratio_ci");
  CHECK(error_of(d) == "series[0].ratio_ci: missing");
  d = compare_doc();
  d.erase("series");
  CHECK(error_of(d) == "series: missing");
  d = compare_doc();
  d["series"][0]["verdict"] = 3;
  CHECK(error_of(d) == "series[0].verdict: expected a string");
}

TEST_CASE("report sweep: log-log points, the fitted power line and memory") {
  // time = 1000 ns x batch^1 over batch 1, 10, 100: x and y each two decades.
  const json doc{
      {"kind", "prism.sweep"},
      {"model", "mlp"},
      {"mode", "train"},
      {"vary", "batch"},
      {"points", json::array({point(1, 1e3, 1e6), point(10, 1e4, 1e6), point(100, 1e5, 1e7)})},
      {"fits", {{"time", fit(1000, 1)}, {"memory", fit(1e6, 0.5)}}},
      {"prediction", nullptr},
      {"check", nullptr}};
  const html::Block b = block(doc);
  CHECK(b.subheading == "sweep of mlp (train), varying batch over 3 points");
  REQUIRE(b.sections.size() == 2);
  const std::string time = b.sections[0].body;
  // x: 1 .. 100 onto 80 .. 860; y: 1e3 .. 1e5 ns onto 280 .. 20.
  CHECK(has(time,
            "<circle cx=\"80\" cy=\"280\" r=\"4\" class=\"fwd\"><title>batch = 1: "
            "1.00 us</title>"));
  CHECK(has(time, "<circle cx=\"470\" cy=\"150\" r=\"4\" class=\"fwd\">"));
  CHECK(has(time, "<circle cx=\"860\" cy=\"20\" r=\"4\" class=\"fwd\">"));
  CHECK(has(time, "<polyline points=\"80,280 860,20\" class=\"roof\">"));
  CHECK_FALSE(has(time, "class=\"peak\""));
  // memory: 1e6 x batch^0.5 runs 1 MB .. 10 MB, the y range 1e6 .. 1e7 over 260 px.
  CHECK(b.sections[1].title == "Memory against batch");
  const std::string memory = b.sections[1].body;
  CHECK(has(memory, "<polyline points=\"80,280 860,20\" class=\"roof\">"));
  CHECK(has(memory, "<circle cx=\"470\" cy=\"280\" r=\"4\" class=\"fwd\">"));
}

TEST_CASE("report sweep: the prediction, its interval and the checked point") {
  // Two points, fit 1000 x^1; predicted 1e5 at 100 in [1e4, 1e6], measured 2e5 there.
  const json doc{{"kind", "prism.sweep"},
                 {"vary", "batch"},
                 {"points", json::array({point(1, 1e3, -1), point(10, 1e4, -1)})},
                 {"fits", {{"time", fit(1000, 1)}, {"memory", {{"error", "no memory"}}}}},
                 {"prediction",
                  {{"at", 100},
                   {"time_ns", {{"value", 1e5}, {"interval", {1e4, 1e6}}}},
                   {"memory_bytes", nullptr}}},
                 {"check", {{"point", {{"median_ns", 2e5}, {"tracked_peak_bytes", -1}}}}}};
  const html::Block b = block(doc);
  REQUIRE(b.sections.size() == 1);  // no memory in the points: no memory view
  const std::string time = b.sections[0].body;
  // y: 1e3 .. 1e6 ns, three decades onto 280 .. 20 (86.67 px a decade).
  CHECK(has(time, "<circle cx=\"470\" cy=\"193.33\" r=\"4\" class=\"fwd\">"));
  CHECK(has(time, "<polyline points=\"80,280 860,106.67\" class=\"roof\">"));
  CHECK(has(time, "<line x1=\"860\" y1=\"193.33\" x2=\"860\" y2=\"20\" class=\"peak\">"));
  CHECK(has(time,
            "<circle cx=\"860\" cy=\"106.67\" r=\"5\" class=\"peak\"><title>predicted at "
            "batch = 100: 100 us (10.0 us .. 1.00 ms)</title>"));
  // 2e5: 280 - 260 x log10(200) / 3 = 80.58; the prediction was 50% under it.
  CHECK(has(time,
            "<circle cx=\"860\" cy=\"80.58\" r=\"4\" class=\"bwd\"><title>measured at "
            "batch = 100: 200 us (-50.0% from the prediction)</title>"));
}

TEST_CASE("report sweep: bad or missing fields are named by their path") {
  json d{{"kind", "prism.sweep"},
         {"points", json::array({point(1, 1e3, -1), {{"value", 2}}})},
         {"fits", {{"time", fit(1, 1)}}}};
  CHECK(error_of(d) == "points[1].median_ns: missing");
  d["points"][1]["median_ns"] = 5;
  d["fits"] = json::object();
  CHECK(error_of(d) == "fits.time: missing");
  d["fits"]["time"] = {{"c", "x"}, {"k", 1}};
  CHECK(error_of(d) == "fits.time.c: expected a number");
  d.erase("points");
  CHECK(error_of(d) == "points: missing");
}

TEST_CASE("report models: stacked bars of time by op class, one per model and mode") {
  const json doc{{"kind", "prism.models"},
                 {"options", {{"batch", 8}}},
                 {"models", json::array({model("cnn", mode(4.2e6, 3e6, 1e6), mode(1e6, 0, 1e6)),
                                         model("mlp", mode(1.1e6, 1e6, 0), nullptr)})}};
  const html::Block b = block(doc);
  CHECK(b.subheading == "models side by side: cnn, mlp, batch 8");
  REQUIRE(b.sections.size() == 2);
  const std::string train = b.sections[0].body;
  // x: 0 .. 4 ms onto 140 .. 780 (160 px a ms); rows of 26 px from y = 10, bars 4 px in.
  CHECK(has(train,
            "<rect x=\"140\" y=\"14\" width=\"480\" height=\"18\" class=\"r0\">"
            "<title>cnn · matmul: 3.00 ms per call (75.0% of the classes&#39; time)"));
  CHECK(has(train,
            "<rect x=\"620\" y=\"14\" width=\"160\" height=\"18\" class=\"r1\">"
            "<title>cnn · conv: 1.00 ms per call (25.0% of the classes&#39; time)"));
  CHECK(has(train, "<rect x=\"140\" y=\"40\" width=\"160\" height=\"18\" class=\"r0\">"));
  CHECK(has(train, "median 4.20 ms"));
  CHECK(has(train, "<span><i class=\"r0\"></i>matmul</span><span><i class=\"r1\"></i>conv"));
  // Inference: conv keeps its colour; mlp was not measured; 0 .. 1 ms now spans the plot.
  const std::string infer = b.sections[1].body;
  CHECK(has(infer, "<rect x=\"140\" y=\"14\" width=\"640\" height=\"18\" class=\"r1\">"));
  CHECK(has(infer, "not measured in this mode"));
  CHECK_FALSE(has(infer, "class=\"r0\""));
}

TEST_CASE("report models: bad or missing fields are named by their path") {
  json d{{"kind", "prism.models"}, {"models", json::array({model("a", mode(1, 1, 1), nullptr)})}};
  d["models"][0]["train"]["time_by_class"]["conv"]["ns"] = "x";
  CHECK(error_of(d) == "models[0].train.time_by_class.conv.ns: expected a number");
  d["models"][0]["train"].erase("median_ns");
  CHECK(error_of(d) == "models[0].train.median_ns: missing");
  d["models"][0].erase("model");
  CHECK(error_of(d) == "models[0].model: missing");
  d.erase("models");
  CHECK(error_of(d) == "models: missing");
}

TEST_CASE("report gate: the verdict, one row per check coloured by its outcome, errors by path") {
  const json doc = {{"kind", "prism.gate"},
                    {"passed", false},
                    {"base", "a.json"},
                    {"cand", "b.json"},
                    {"checks",
                     {{{"series", "batch 8"},
                       {"what", "p99 latency"},
                       {"passed", true},
                       {"detail", "+2.0% <= 15% limit"}},
                      {{"series", ""},
                       {"what", "throughput <&>"},
                       {"passed", false},
                       {"detail", "-31.2% [-40.1%, -22.0%] > 10% limit"}}}}};
  const html::Block b = block(doc);
  REQUIRE(b.sections.size() == 1);
  CHECK(b.sections[0].title == "Gate: failed");
  CHECK(b.subheading == "gate b.json against a.json");
  const std::string& body = b.sections[0].body;
  CHECK(has(body, "1 of the 2 checks broke."));
  // Row i's square at y = 5 + 22 i + 3, green for the check that held, vermillion for the other.
  CHECK(has(body, "<rect x=\"0\" y=\"8\" width=\"14\" height=\"14\" class=\"opt\""));
  CHECK(has(body, "<rect x=\"0\" y=\"30\" width=\"14\" height=\"14\" class=\"bwd\""));
  CHECK(has(body, "PASS batch 8 p99 latency: +2.0% &lt;= 15% limit"));
  CHECK(has(body, "FAIL throughput &lt;&amp;&gt;: -31.2% [-40.1%, -22.0%] &gt; 10% limit"));

  json passing = doc;
  passing["passed"] = true;
  passing["checks"].erase(1);
  CHECK(block(passing).sections[0].title == "Gate: passed");
  CHECK(has(block(passing).sections[0].body, "Every one of the 1 checks held."));

  json bad = doc;
  bad["checks"][1].erase("detail");
  CHECK(error_of(bad) == "checks[1].detail: missing");
  bad = doc;
  bad["passed"] = "no";
  CHECK(error_of(bad) == "passed: expected true or false");
}
