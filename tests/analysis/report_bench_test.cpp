// The bench view of `prism report` (analysis/html/bench_views.h): for hand-made bench documents
// with known call times, the histogram's bins (Freedman-Diaconis, with its sqrt(n) fallback),
// the bars' pixels, the empirical CDF's outline and the percentile lines, all worked out by hand
// here from the layout constants; and every missing or mistyped field named by its path.
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "analysis/html/bench_views.h"
#include "analysis/html/result_views.h"
#include "analysis/latency.h"
#include "kernels/types.h"

namespace html = prism::analysis::html;
using nlohmann::json;

namespace {

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// The fields `prism bench --json` writes that the view reads (analysis/run_record.cpp).
json bench_doc(std::vector<double> samples_ns, json latency = json::object()) {
  json batch{{"batch", 4}, {"throughput_per_s", 70700.5}, {"samples_ns", std::move(samples_ns)}};
  if (!latency.empty()) batch["latency"] = std::move(latency);
  return json{{"kind", "prism.bench"},
              {"model", "mlp"},
              {"mode", "infer"},
              {"options", {{"device", "cpu"}}},
              {"fingerprint", {{"threads", 1}}},
              {"batches", json::array({batch})}};
}

// 10..19 us, in a scrambled time order; sorted: 10 11 12 12 13 14 16 19 (thousands of ns).
const std::vector<double> kEight{13000, 10000, 19000, 12000, 11000, 16000, 12000, 14000};

std::string error_of(const json& doc) {
  try {
    html::bench_block("b.json", doc);
  } catch (const prism::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("report bench: Freedman-Diaconis bins of eight calls, counted exactly") {
  // Type-7 quartiles: q25 = 11 + 0.75 (12 - 11) = 11.75k, q75 = 14 + 0.25 (16 - 14) = 14.5k, so
  // IQR = 2750 ns and h = 2 * 2750 * 8^(-1/3) = 2750 ns; the range 9000 ns needs ceil(3.27) = 4
  // bins of 2250 ns: [10, 12.25) [12.25, 14.5) [14.5, 16.75) [16.75, 19] us. max / min = 1.9, so
  // the axis is linear.
  const html::Histogram h = html::latency_histogram(kEight);
  CHECK_FALSE(h.log);
  CHECK(h.lo == doctest::Approx(10000));
  CHECK(h.width == doctest::Approx(2250));
  CHECK(h.counts == std::vector<int64_t>{4, 2, 1, 1});
  CHECK(h.edge_ns(4) == doctest::Approx(19000));

  // Seven equal calls and one slow one: IQR = 0, so sqrt(8) -> 3 bins, the middle one empty.
  const html::Histogram flat =
      html::latency_histogram({5000, 5000, 5000, 9000, 5000, 5000, 5000, 5000});
  CHECK(flat.counts == std::vector<int64_t>{7, 0, 1});

  // A spread of two decades goes on a log axis, binned in log10: values 4, 4, 5, 6, IQR =
  // 5.25 - 4 = 1.25, h = 2 * 1.25 * 4^(-1/3) = 1.57, ceil(2 / 1.57) = 2 bins of one decade each.
  const html::Histogram wide = html::latency_histogram({1e4, 1e6, 1e4, 1e5});
  CHECK(wide.log);
  CHECK(wide.counts == std::vector<int64_t>{2, 2});
  CHECK(wide.edge_ns(1) == doctest::Approx(1e5));

  // One value only: one bin holding it.
  CHECK(html::latency_histogram({7000}).counts == std::vector<int64_t>{1});
}

TEST_CASE("report bench: bars, CDF and percentile lines at their exact pixels") {
  const json doc =
      bench_doc(kEight, {{"p50_ci_ns", {12000, 13000}}, {"p99_ci_ns", {16000, 19000}}});
  const html::BlockMaker make = html::find_result_view("prism.bench");
  // Registered under the kind the bench writes (doctest cannot print a function pointer).
  const bool registered = make == &html::bench_block;
  REQUIRE(registered);
  const html::Block b = make("b.json", doc);
  CHECK(b.heading == "b.json");
  CHECK(b.subheading == "model mlp, infer, 1 thread, cpu; throughput: batch 4: 70.7k samples/s");
  REQUIRE(b.sections.size() == 1);
  CHECK(b.sections[0].title == "Latency, batch 4");
  CHECK_FALSE(b.sections[0].how_to_read.empty());
  const std::string& body = b.sections[0].body;

  // x: max 19 us -> microseconds; linear_scale(10, 19) widens to [10, 20] (step 2) over pixels
  // 80..860, so x(t us) = 80 + 78 (t - 10). y: counts 0..4 over 220..20, y(c) = 220 - 50 c.
  CHECK(has(body, "time per call, us</text>"));
  CHECK(has(body,
            "<rect x=\"80\" y=\"20\" width=\"175.5\" height=\"200\" class=\"area\">"
            "<title>10 us - 12.25 us: 4 calls (50.0%)</title>"));
  CHECK(has(body,
            "<rect x=\"255.5\" y=\"120\" width=\"175.5\" height=\"100\" class=\"area\">"
            "<title>12.25 us - 14.5 us: 2 calls (25.0%)</title>"));
  CHECK(has(body, "<rect x=\"431\" y=\"170\" width=\"175.5\" height=\"50\" class=\"area\">"));
  CHECK(has(body, "<rect x=\"606.5\" y=\"170\" width=\"175.5\" height=\"50\" class=\"area\">"));

  // The CDF, y(F) = 220 - 200 F: a step at each distinct time (12 us holds two calls: one step
  // of 2/8), then on to the right edge at 1.
  CHECK(has(body,
            "points=\"80,220 80,195 158,195 158,170 236,170 236,120 314,120 314,95 "
            "392,95 392,70 548,70 548,45 782,45 782,20 860,20\" class=\"roof\""));

  // Type-7 percentiles of the sorted calls: p50 = 12 + 0.5 (13 - 12) = 12.5 us, p95 =
  // 16 + 0.65 (19 - 16) = 17.95 us, p99 = 16 + 0.93 * 3 = 18.79 us; the same as latency_stats().
  const prism::analysis::LatencyStats st = prism::analysis::latency_stats(kEight);
  CHECK(st.p50 == doctest::Approx(12500));
  CHECK(st.p95 == doctest::Approx(17950));
  CHECK(st.p99 == doctest::Approx(18790));
  // Each line is drawn twice, across the histogram (y 20..220) and across the CDF (20..220).
  const std::string p50 =
      "<line x1=\"275\" y1=\"20\" x2=\"275\" y2=\"220\" class=\"fwd\"><title>p50 = 12.5 us "
      "(95% interval 12 us - 13 us, block bootstrap)</title>";
  CHECK(has(body, p50));
  CHECK(body.find(p50, body.find(p50) + 1) != std::string::npos);
  CHECK(has(body,
            "<line x1=\"700.1\" y1=\"20\" x2=\"700.1\" y2=\"220\" class=\"opt\">"
            "<title>p95 = 17.95 us</title>"));
  CHECK(has(body,
            "<line x1=\"765.62\" y1=\"20\" x2=\"765.62\" y2=\"220\" class=\"bwd\">"
            "<title>p99 = 18.79 us (95% interval 16 us - 19 us, block bootstrap)</title>"));
  // Eight calls cannot tell p99 from the maximum: the view says so.
  CHECK(has(body, "Only 8 calls"));
}

TEST_CASE("report bench: a log axis over decades, and equal times in one pixel column") {
  html::LatencyEntry e;
  e.label = "batch 1";
  e.samples_ns = {1e4, 1e6, 1e4, 1e5};
  const html::Histogram h = html::latency_histogram(e.samples_ns);
  const auto [x, y] = html::histogram_scales(e, h);
  // 10 us .. 1000 us over two decades, 390 px each; counts 0..2 over 220..20.
  CHECK(x.log);
  CHECK(x(10) == doctest::Approx(80));
  CHECK(x(100) == doctest::Approx(470));
  CHECK(y(2) == doctest::Approx(20));
  const std::string body = html::latency_view(e).body;
  CHECK(has(body, "time per call, us (log)</text>"));
  CHECK(has(body, "<rect x=\"80\" y=\"20\" width=\"390\" height=\"200\" class=\"area\">"));
  CHECK(has(body, "<rect x=\"470\" y=\"20\" width=\"390\" height=\"200\" class=\"area\">"));

  // Times closer than a pixel share one vertical step, placed at the first of them.
  const html::Scale lin{0, 780, 80, 860, false};
  const auto pts = html::cdf_points({100.1, 100.2, 300}, 1, lin, html::cdf_y_scale());
  // x(t) = 80 + t: 100.1 and 100.2 both round to column 180, one step from 0 to 2/3 there.
  REQUIRE(pts.size() == 5);
  CHECK(pts[0] == std::pair<double, double>{180.1, 220});
  CHECK(pts[1].first == doctest::Approx(180.1));
  CHECK(pts[1].second == doctest::Approx(220 - 200.0 * 2 / 3));
  CHECK(pts[2].first == doctest::Approx(380));
  CHECK(pts[2].second == doctest::Approx(220 - 200.0 * 2 / 3));
  CHECK(pts[3] == std::pair<double, double>{380, 20});
  CHECK(pts[4].first == doctest::Approx(860));
}

TEST_CASE("report bench: a missing or mistyped field is an error naming its path") {
  json doc = bench_doc(kEight);
  doc["batches"][0].erase("samples_ns");
  CHECK(error_of(doc) == "batches[0].samples_ns: missing");

  doc = bench_doc(kEight);
  doc["batches"][0]["samples_ns"] = "fast";
  CHECK(error_of(doc) == "batches[0].samples_ns: expected an array");

  doc = bench_doc({1000, 0, 3000});
  CHECK(error_of(doc) == "batches[0].samples_ns[1]: expected a positive number of ns");

  doc = bench_doc({});
  CHECK(error_of(doc) == "batches[0].samples_ns: no calls were timed");

  doc = bench_doc(kEight);
  doc["batches"][0].erase("throughput_per_s");
  CHECK(error_of(doc) == "batches[0].throughput_per_s: missing");

  doc = bench_doc(kEight);
  doc["batches"][0]["batch"] = 0;
  CHECK(error_of(doc) == "batches[0].batch: expected a whole number >= 1");

  doc = bench_doc(kEight, {{"p99_ci_ns", {1}}});
  CHECK(error_of(doc) == "batches[0].latency.p99_ci_ns: expected [low, high]");

  doc = bench_doc(kEight);
  doc.erase("fingerprint");
  CHECK(error_of(doc) == "fingerprint: missing");

  doc = bench_doc(kEight);
  doc["options"].erase("device");
  CHECK(error_of(doc) == "options.device: missing");

  doc = bench_doc(kEight);
  doc["batches"] = json::object();
  CHECK(error_of(doc) == "batches: expected an array");

  doc = bench_doc(kEight);
  doc["batches"] = json::array();
  CHECK(error_of(doc) == "batches: no calls were timed (empty, and no server points)");
}

TEST_CASE("report bench: a server bench draws each load that completed queries") {
  json doc = bench_doc(kEight);
  doc["batches"] = json::array();  // `--qps` replaces the batch sweep
  doc["server"] = {{"points", json::array({{{"offered_qps", 2000},
                                            {"achieved_qps", 1500.0},
                                            {"latency_ns", {30000, 10000, 20000}}},
                                           {{"offered_qps", 9000},
                                            {"achieved_qps", 0.0},
                                            {"latency_ns", json::array()}}})}};
  const html::Block b = html::bench_block("s.json", doc);
  CHECK(b.subheading ==
        "model mlp, infer, 1 thread, cpu; throughput: server, 2k queries/s offered: 1.5k queries "
        "completed/s");
  REQUIRE(b.sections.size() == 1);  // nothing completed at 9000/s: nothing to draw
  CHECK(b.sections[0].title == "Latency, server, 2k queries/s offered");
  CHECK(has(b.sections[0].how_to_read, "arrival to answer"));
  // p50 of 10, 20, 30 us is 20 us: linear_scale(10, 30) is [10, 30] (step 5), x = 80 + 39 (t - 10).
  CHECK(has(b.sections[0].body,
            "<line x1=\"470\" y1=\"20\" x2=\"470\" y2=\"220\" class=\"fwd\">"
            "<title>p50 = 20 us</title>"));

  doc["server"]["points"][0].erase("offered_qps");
  CHECK(error_of(doc) == "server.points[0].offered_qps: missing");
}
