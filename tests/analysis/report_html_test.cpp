// The HTML report's pieces (analysis/html): the SVG builder's scales and escaping, and the
// numbers each view of a profile places in its SVG, checked against hand-made profiles whose
// coordinates are worked out here from the layout constants.
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "analysis/html/profile_views.h"
#include "analysis/html/report_page.h"
#include "analysis/html/svg.h"
#include "kernels/types.h"

namespace html = prism::analysis::html;
using nlohmann::json;

namespace {

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

json op(const std::string& name, const std::string& phase, double self_ns, double flops = 0,
        double bytes = 0) {
  return json{{"name", name},       {"phase", phase}, {"variant", "naive"}, {"grad_of", ""},
              {"device", "cpu"},    {"calls", 2},     {"time_ns", self_ns}, {"self_ns", self_ns},
              {"gpu_ns", -1},       {"flops", flops}, {"bytes", bytes},     {"allocs", 3},
              {"alloc_bytes", 4096}};
}

json profile(json ops, json samples = 7) {
  return json{{"meta", {{"threads", 1}}},
              {"ops", std::move(ops)},
              {"memory", {{"peak_live_bytes", {{"cpu", 1500}}}, {"samples", std::move(samples)}}},
              {"totals", json::object()}};
}

}  // namespace

TEST_CASE("report svg: escaping and fixed number formatting") {
  CHECK(html::escape("a<b & \"c\" 'd'>") == "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;");
  CHECK(html::num(12.5) == "12.5");
  CHECK(html::num(3) == "3");
  CHECK(html::num(2.0 / 3) == "0.67");
  CHECK(html::num(-0.001) == "0");
  CHECK(html::tick_label(1500) == "1.5k");
  CHECK(html::tick_label(0.01) == "0.01");
  CHECK(html::tick_label(2e9) == "2G");

  html::Svg svg(100, 50, "a <test>");
  svg.rect(1, 2, 3.333, 4, "fwd", "x < y & z");
  const std::string s = svg.str();
  CHECK(has(s, "aria-label=\"a &lt;test&gt;\""));
  CHECK(has(s,
            "<rect x=\"1\" y=\"2\" width=\"3.33\" height=\"4\" class=\"fwd\">"
            "<title>x &lt; y &amp; z</title></rect>"));
}

TEST_CASE("report svg: linear and log scales map the domain's ends to the pixel range's ends") {
  const html::Scale lin = html::linear_scale(0, 7.3, 100, 500);
  CHECK(lin.d0 == 0);
  CHECK(lin.d1 == 8);  // widened to a round tick (step 2)
  CHECK(lin(0) == 100);
  CHECK(lin(8) == 500);
  CHECK(lin(4) == 300);
  CHECK(lin.ticks() == std::vector<double>{0, 2, 4, 6, 8});

  // A y axis runs backwards: the bottom pixel is the domain's low end.
  const html::Scale lg = html::log_scale(0.3, 42, 400, 0);
  CHECK(lg.d0 == doctest::Approx(0.1));
  CHECK(lg.d1 == doctest::Approx(100));
  CHECK(lg(0.1) == doctest::Approx(400));
  CHECK(lg(100) == doctest::Approx(0));
  CHECK(lg(1) == doctest::Approx(400 - 400.0 / 3));
  REQUIRE(lg.ticks().size() == 4);
  CHECK(lg.ticks()[3] == doctest::Approx(100));
}

TEST_CASE("report op breakdown: bar widths proportional to self time, sorted, coloured by phase") {
  const html::ProfileData p = html::read_profile(
      profile(json::array({op("sgd_update", "optimizer", 1e6),
                           op("matmul", "forward", 4e6, 8e6, 4e6), op("relu", "backward", 2e6)})));
  const html::Scale x = html::op_breakdown_scale(p);
  CHECK(x.d0 == 0);
  CHECK(x.d1 == 4);  // ms: the longest row
  const std::string body = html::op_breakdown_view(p).body;
  // The plot is kBarArea.width = 480 px wide: 4 ms fills it, 2 ms half, 1 ms a quarter; rows
  // of 18 px from the top (10), each bar 2 px below its row's top.
  CHECK(has(body, "<rect x=\"300\" y=\"12\" width=\"480\" height=\"14\" class=\"fwd\">"));
  CHECK(has(body, "<rect x=\"300\" y=\"30\" width=\"240\" height=\"14\" class=\"bwd\">"));
  CHECK(has(body, "<rect x=\"300\" y=\"48\" width=\"120\" height=\"14\" class=\"opt\">"));
  // The tooltip: calls, FLOP rate and bandwidth (8e6 FLOP and 4e6 bytes in 4e6 ns), allocations.
  CHECK(has(body, "2 calls, 4.00 ms (57.1% of op time)"));
  CHECK(has(body, "8 MFLOP, 2.00 GFLOP/s"));
  CHECK(has(body, "4 MB moved (minimum), 1.00 GB/s"));
  CHECK(has(body, "3 allocations, 4.1 kB"));
}

TEST_CASE("report op breakdown: op names are escaped in labels and tooltips") {
  const html::ProfileData p =
      html::read_profile(profile(json::array({op("a<b&\"c\"", "forward", 1000)})));
  const std::string body = html::op_breakdown_view(p).body;
  CHECK(has(body, "a&lt;b&amp;&quot;c&quot; · forward · naive</text>"));
  CHECK(has(body, "<title>a&lt;b&amp;&quot;c&quot;, forward"));
  CHECK_FALSE(has(body, "a<b"));
  CHECK_FALSE(has(body, "&\"c"));
}

TEST_CASE("report op breakdown: a long label is cut to fit left of the bars, whole on hover") {
  const std::string name(60, 'x');
  const std::string body =
      html::op_breakdown_view(html::read_profile(profile(json::array({op(name, "forward", 1)}))))
          .body;
  CHECK(has(body, "</title>" + std::string(42, 'x') + "…</text>"));
  CHECK(has(body, "<title>" + name + ", forward, naive, cpu"));
}

TEST_CASE("report roofline: scales, roofs, ridge and each op's point for given peaks") {
  // Peaks 100 GFLOP/s and 10 GB/s: the ridge at 10 FLOP/byte. One op at intensity 1 doing
  // 10 GFLOP/s (1e6 FLOP in 1e5 ns), one at intensity 10 doing 100 GFLOP/s in 1e6 ns.
  const html::ProfileData p = html::read_profile(
      profile(json::array({op("relu", "forward", 1e5, 1e6, 1e6),
                           op("matmul", "backward", 1e6, 1e8, 1e7), op("view", "forward", 50)})));
  const html::RooflinePeaks peaks{100, 10};
  CHECK(html::roofline_ops(p).size() == 2);  // "view" does no FLOPs
  const auto [x, y] = html::roofline_scales(p, peaks);
  CHECK(x.d0 == doctest::Approx(1));     // min(lowest op, ridge / 10)
  CHECK(x.d1 == doctest::Approx(100));   // ridge x 10
  CHECK(y.d0 == doctest::Approx(10));    // the slowest op, and the memory roof at x = 1
  CHECK(y.d1 == doctest::Approx(1000));  // 2 x peak, to the next decade
  // kRooflineArea: x 70 .. 850, y 400 (bottom) .. 20 (top).
  CHECK(x(1) == doctest::Approx(70));
  CHECK(x(100) == doctest::Approx(850));
  CHECK(y(10) == doctest::Approx(400));
  CHECK(y(1000) == doctest::Approx(20));

  const std::string body = html::roofline_view(p, peaks).body;
  // Intensity 10 is half way across two decades: 70 + 780 / 2; 100 GFLOP/s half way up.
  // Radius 3 + 12 sqrt(time / longest): 15 for the longest, 3 + 12 sqrt(0.1) = 6.79.
  CHECK(has(body, "<circle cx=\"460\" cy=\"210\" r=\"15\" class=\"bwd\">"));
  CHECK(has(body, "<circle cx=\"70\" cy=\"400\" r=\"6.79\" class=\"fwd\">"));
  // The memory roof from the left edge up to the ridge, then the flat compute roof.
  CHECK(has(body, "points=\"70,400 460,210 850,210\" class=\"roof\""));
  CHECK(has(body, "<line x1=\"460\" y1=\"400\" x2=\"460\" y2=\"210\" class=\"ridge\">"));
  CHECK(has(body, "10 FLOP/byte, 100 GFLOP/s (100.0% of the roof there, compute bound)"));
  CHECK(has(body, "1 of 3 op rows are not drawn"));
}

TEST_CASE("report roofline: without machine peaks, a note instead of a drawing") {
  const html::ProfileData p =
      html::read_profile(profile(json::array({op("relu", "forward", 1e5, 1e6, 1e6)})));
  const std::string body = html::roofline_view(p, html::RooflinePeaks{}).body;
  CHECK(has(body, "run <code>prism machine</code> to add the roofline"));
  CHECK_FALSE(has(body, "<svg"));
  CHECK_FALSE(has(html::roofline_view(p, html::RooflinePeaks{100, 0}).body, "<svg"));
}

TEST_CASE("report memory timeline: live bytes over time with the peak marked") {
  const json samples = json::array({{{"t_ns", 5e6}, {"live_bytes", 100}},
                                    {{"t_ns", 6e6}, {"live_bytes", 300}, {"op", "matmul"}},
                                    {{"t_ns", 7e6}, {"live_bytes", 200}}});
  const html::ProfileData p = html::read_profile(profile(json::array(), samples));
  const auto [x, y] = html::memory_scales(p);
  CHECK(x.d1 == 2);    // ms since the first sample
  CHECK(y.d1 == 300);  // bytes, round already
  const std::string body = html::memory_view(p).body;
  // kMemoryArea: x 80 .. 860, y 280 (bottom) .. 20. The peak: 1 ms of 2, 300 bytes of 300.
  CHECK(has(body,
            "<circle cx=\"470\" cy=\"20\" r=\"4\" class=\"peak\">"
            "<title>peak 300 B at 1.000 ms (matmul)</title>"));
  // One step-shaped area: up at each sample, closed along the bottom.
  CHECK(has(body,
            "points=\"80,193.33 470,193.33 470,20 860,20 860,106.67 860,280 860,280 "
            "470,280 470,280 80,280\" class=\"area\""));
}

TEST_CASE("report memory timeline: stacked by role when the samples carry roles") {
  const json samples = json::array(
      {{{"t_ns", 0}, {"live_bytes", 100}, {"roles", {{"activation", 40}, {"parameter", 60}}}},
       {{"t_ns", 1e6}, {"live_bytes", 200}, {"roles", {{"activation", 140}, {"parameter", 60}}}}});
  const std::string body =
      html::memory_view(html::read_profile(profile(json::array(), samples))).body;
  // Parameters at the bottom (they live longest), activations on them.
  CHECK(has(body,
            "<span><i class=\"r0\"></i>parameter</span><span><i class=\"r1\"></i>"
            "activation</span>"));
  CHECK(has(body, "class=\"r0\"><title>parameter</title>"));
  CHECK(has(body, "class=\"r1\"><title>activation</title>"));
}

TEST_CASE("report memory timeline: a profile with only a sample count gets the peak in words") {
  const std::string body = html::memory_view(html::read_profile(profile(json::array()))).body;
  CHECK(has(body, "7 allocations and frees were recorded"));
  CHECK(has(body, "Peak live memory: cpu 1.5 kB."));
  CHECK_FALSE(has(body, "<svg"));
}

TEST_CASE("report read_profile: what is wrong is named") {
  auto message = [](const json& doc) -> std::string {
    try {
      html::read_profile(doc);
    } catch (const prism::Error& e) {
      return e.what();
    }
    return "(no error)";
  };
  CHECK(has(message(json::array({1, 2})), "expected a JSON object, got array"));
  CHECK(has(message(json{{"kind", "prism.baseline"}}),
            "this is a prism.baseline result, not a profile"));
  CHECK(has(message(json{{"meta", json::object()}}), "not a profile: no \"ops\" field"));
  json bad = profile(json::array({op("a", "forward", 1), op("b", "forward", 1)}));
  bad["ops"][1]["self_ns"] = "fast";
  CHECK(message(bad) == "ops[1].self_ns: expected a number");
  bad = profile(json::array());
  bad.erase("memory");
  CHECK(message(bad) == "memory: missing");
}

TEST_CASE("report page: self-contained, both colour schemes, printable, a section per view") {
  const html::ProfileData p =
      html::read_profile(profile(json::array({op("matmul", "forward", 1e6, 1e6, 1e6)})));
  const std::string page =
      html::report_page("prism report <x>", {html::profile_block("p&q.json", p, {100, 10})});
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(has(page, "<title>prism report &lt;x&gt;</title>"));
  CHECK(has(page, "<h2>p&amp;q.json</h2>"));
  CHECK(has(page, "@media (prefers-color-scheme: dark)"));
  CHECK(has(page, "@media print"));
  CHECK(has(page, "#0072B2"));  // Okabe-Ito
  for (const char* title :
       {"<h3>Op breakdown</h3>", "<h3>Roofline</h3>", "<h3>Memory timeline</h3>"}) {
    CHECK_MESSAGE(has(page, title), title);
  }
  CHECK(has(page, "<p class=\"how\">"));
  CHECK_FALSE(has(page, "http://"));
  CHECK_FALSE(has(page, "https://"));
  CHECK_FALSE(has(page, "<script"));
  CHECK_FALSE(has(page, "url("));
}
