// The lab's roof: each row's %roof is against the memory level its bytes fit in at its thread
// count (L1, L2, L3 or DRAM), the report names that level, and a %roof over 100 is explained,
// never printed bare. The peaks are synthetic, so which level a size lands in is exact.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

#include "kernels/lab/lab.h"
#include "tests/test_util.h"

namespace {

using namespace prism;
using testing::contains;

constexpr double kL1Bytes = 32 * 1024, kL2Bytes = 1024 * 1024;

// 100 GFLOP/s; L1 holds 32 KiB at 200 GB/s, L2 1 MiB at 100 GB/s, DRAM 20 GB/s (no L3 known).
lab::PeakRates synthetic_peak() {
  return {100, 20, {{"L1", kL1Bytes, 200}, {"L2", kL2Bytes, 100}}};
}

// relu moves 8 bytes per element (read 4, write 4): 4096 elements are exactly L1's 32 KiB, 4097
// are past it, 262144 (2 MiB) are past L2.
lab::LabOptions relu_at(std::vector<std::string> sizes) {
  lab::LabOptions o;
  o.op = "relu";
  o.sizes = std::move(sizes);
  o.variants = {"naive"};
  o.repetitions = 3;
  o.min_sample_ms = 0.1;
  o.peaks_per_count = {synthetic_peak()};
  o.peak_gflops = 100;
  o.peak_gbs = 20;
  return o;
}

const lab::TimingRow& row_of(const lab::LabResult& r, const std::string& size) {
  const auto it = std::find_if(r.rows.begin(), r.rows.end(),
                               [&](const lab::TimingRow& row) { return row.size == size; });
  REQUIRE(it != r.rows.end());
  return *it;
}

}  // namespace

TEST_CASE("lab roof: each size is measured against the level its bytes fit in") {
  const lab::LabResult r = lab::run_lab(relu_at({"4096", "4097", "262144"}));
  struct Expected {
    const char* size;
    const char* level;
    double gbs;
  };
  for (const Expected& e :
       {Expected{"4096", "L1", 200}, Expected{"4097", "L2", 100}, Expected{"262144", "DRAM", 20}}) {
    CAPTURE(e.size);
    const lab::TimingRow& row = row_of(r, e.size);
    REQUIRE(row.timed);
    CHECK(row.roof_level == e.level);
    CHECK(row.roof_gbs == e.gbs);
    // relu: 1 FLOP per 8 bytes, far below the ridge: the roof is intensity x the level's GB/s.
    const double intensity = static_cast<double>(row.flops) / static_cast<double>(row.bytes);
    CHECK(row.pct_roofline == doctest::Approx(100 * row.gflops / (intensity * e.gbs)));
    CHECK(row.pct_peak_bw == doctest::Approx(100 * row.gbs / e.gbs));
  }
  // The report names the level beside each %roof, and the bandwidths in its header.
  const std::string text = lab::format_lab(r);
  CHECK(contains(text, "bandwidth L1 200.0, L2 100.0, DRAM 20.0 GB/s"));
  CHECK(contains(text, " L1 "));
  CHECK(contains(text, " DRAM "));
  CHECK(contains(text, "the memory level the op's bytes fit in"));
  // The JSON rows carry the level and its bandwidth.
  const auto doc = nlohmann::json::parse(lab::lab_json(r));
  for (const auto& row : doc["rows"]) {
    CAPTURE(row["size"]);
    REQUIRE(row.contains("roof_level"));
    REQUIRE(row.contains("roof_gbs"));
    REQUIRE(row.contains("pct_roofline"));
    if (row["size"] == "4096") {
      CHECK(row["roof_level"] == "L1");
      CHECK(row["roof_gbs"] == 200);
    }
    if (row["size"] == "262144") CHECK(row["roof_level"] == "DRAM");
  }
}

TEST_CASE("lab roof: without cache levels the roof is DRAM's, without peaks there is none") {
  lab::LabOptions o = relu_at({"4096"});
  o.peaks_per_count = {{100, 20}};
  const lab::LabResult dram = lab::run_lab(o);
  CHECK(dram.rows[0].roof_level == "DRAM");
  CHECK(dram.rows[0].roof_gbs == 20);
  o.peaks_per_count.clear();
  o.peak_gflops = o.peak_gbs = 0;
  const lab::LabResult none = lab::run_lab(o);
  CHECK(none.rows[0].roof_level.empty());
  CHECK(none.rows[0].pct_roofline == 0);
  CHECK_FALSE(nlohmann::json::parse(lab::lab_json(none))["rows"][0].contains("roof_level"));
}

TEST_CASE("lab roof: a row above its roof is flagged and explained") {
  // An L1 roof no kernel can stay under: 1 MB/s.
  lab::LabOptions o = relu_at({"4096"});
  o.peaks_per_count = {{100, 20, {{"L1", kL1Bytes, 0.001}}}};
  const lab::LabResult r = lab::run_lab(o);
  REQUIRE(r.rows[0].timed);
  CHECK(r.rows[0].pct_roofline > 100);
  const std::string text = lab::format_lab(r);
  CHECK(contains(text, " above-roof"));
  CHECK(contains(text, "above-roof: %roof over 100"));
  // Below the roof: neither the flag nor the note. Roofs no machine reaches (1 PFLOP/s, an L1 of
  // 1 PB/s), so the check cannot depend on how fast this one is.
  lab::LabOptions high = relu_at({"4096"});
  high.peaks_per_count = {{1e6, 1e6, {{"L1", kL1Bytes, 1e6}}}};
  high.peak_gflops = 1e6;
  high.peak_gbs = 1e6;
  const lab::LabResult calm = lab::run_lab(high);
  REQUIRE(calm.rows[0].timed);
  CHECK(calm.rows[0].pct_roofline < 100);
  CHECK_FALSE(contains(lab::format_lab(calm), "above-roof"));
}

TEST_CASE("lab roof: the %roof cell reads the percentage and the level") {
  // A result made by hand: formatting alone, no timing.
  lab::LabResult r;
  r.op = "relu";
  r.baseline = "naive";
  r.thread_counts = {1};
  r.peaks = {synthetic_peak()};
  r.peak_gflops = 100;
  r.peak_gbs = 20;
  lab::TimingRow row;
  row.variant = "naive";
  row.tag = "naive";
  row.size = "4096";
  row.timed = true;
  row.median_ns = 1000;
  row.flops = 4096;
  row.bytes = 32768;
  row.gflops = 4.096;
  row.gbs = 32.768;
  row.pct_roofline = 134.4;
  row.roof_level = "L2";
  row.roof_gbs = 100;
  r.rows = {row};
  const std::string text = lab::format_lab(r);
  CHECK(contains(text, " 134 L2 "));
  CHECK(contains(text, "above-roof"));
  r.rows[0].pct_roofline = 0;  // unknown peaks
  CHECK(contains(lab::format_lab(r), "      - "));
}
