// The roofline with the cache levels: which level a working set maps to at a thread count
// (every boundary, hyperthreads, levels unknown), the levels through the JSON cache and the
// errors a malformed level entry gives, the decision to measure again once the machine is quiet,
// and a tiny measurement's level rows. Measurements here take milliseconds.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <cmath>
#include <fstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "profiler/machine.h"
#include "temp_dir.h"

namespace prof = prism::profiler;

namespace {

constexpr int64_t kKiB = 1024, kMiB = 1024 * 1024;

// L1d 32 KiB and L2 1 MiB per core, L3 32 MiB shared, 2 cores; rows for 1 and 2 threads with
// L1 200/400, L2 100/190, L3 50/90 and DRAM (the triad) 20/40 GB/s; 100/200 GFLOP/s.
prof::MachinePeak synthetic() {
  prof::MachinePeak m;
  m.key = "synthetic | test | -O2 | method 3";
  m.cpu_model = "synthetic CPU";
  m.logical_cpus = 2;
  m.physical_cores = 2;
  m.caches = {32 * kKiB, 1 * kMiB, 32 * kMiB};
  m.simd = "none";
  m.compiler = "test";
  m.flags = "-O2";
  m.measured_at = "2026-11-26T00:00:00Z";
  m.load_avg = 0.25;
  m.clock = "per-thread CPU time, summed over threads";
  m.stream_array_bytes = 128 * kMiB;
  const double fma[] = {100, 200}, l1[] = {200, 400}, l2[] = {100, 190}, l3[] = {50, 90},
               dram[] = {20, 40};
  for (int t = 1; t <= 2; ++t) {
    const size_t i = static_cast<size_t>(t - 1);
    prof::ThreadLimits row{t,
                           {fma[i], fma[i], fma[i], 9},
                           {dram[i], dram[i], dram[i], 9},
                           {dram[i], dram[i], dram[i], 9}};
    row.levels = {{"L1", 16 * kKiB * t, {l1[i], l1[i] - 5, l1[i] - 10, 9}},
                  {"L2", 512 * kKiB * t, {l2[i], l2[i] - 5, l2[i] - 10, 9}},
                  {"L3", 16 * kMiB, {l3[i], l3[i] - 5, l3[i] - 10, 9}}};
    m.rows.push_back(row);
  }
  return m;
}

void check_roof(const prof::Roof& r, const std::string& level, double gbps) {
  CHECK(r.level == level);
  CHECK(r.gbps == gbps);
}

// A temp dir named after this test file.
struct TempDir : prism::profiler::testing::TempDir {
  TempDir() : prism::profiler::testing::TempDir("prism_levels_test") {}
};

// The message machine_from_json throws for `text`, "" if it does not throw.
std::string json_error(const std::string& text) {
  try {
    prof::machine_from_json(text);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

// synthetic()'s JSON with row 0's "levels" replaced by `levels`.
std::string with_levels(const nlohmann::json& levels) {
  nlohmann::json j = nlohmann::json::parse(prof::machine_to_json(synthetic()));
  j["rows"][0]["levels"] = levels;
  return j.dump();
}

// Quick settings: milliseconds in all (level sets capped at 384 KiB by the small arrays).
prof::MeasureOptions tiny(int threads) {
  prof::MeasureOptions o;
  o.max_threads = threads;
  o.repetitions = 3;
  o.fma_seconds = 1e-4;
  o.stream_array_bytes = 256 * kKiB;
  o.level_seconds = 1e-4;
  return o;
}

}  // namespace

TEST_CASE("machine levels: a working set maps to the first level that holds it, at 1 thread") {
  const prof::MachinePeak m = synthetic();
  check_roof(m.roof_for(1, 0), "L1", 200);
  check_roof(m.roof_for(1, 32 * kKiB), "L1", 200);  // exactly the level's size still fits
  check_roof(m.roof_for(1, 32 * kKiB + 1), "L2", 100);
  check_roof(m.roof_for(1, 1 * kMiB), "L2", 100);
  check_roof(m.roof_for(1, 1 * kMiB + 1), "L3", 50);
  check_roof(m.roof_for(1, 32 * kMiB), "L3", 50);
  check_roof(m.roof_for(1, 32 * kMiB + 1), "DRAM", 20);
  check_roof(m.roof_for(1, 1e12), "DRAM", 20);
  // Fewer than 1 thread is treated as 1, as peak_gbps does.
  check_roof(m.roof_for(0, 1000), "L1", 200);
  // Ridge against the level: 100 GFLOP/s over 200 GB/s in L1, over 20 GB/s from DRAM.
  CHECK(m.ridge_flop_per_byte(1, 1000) == 0.5);
  CHECK(m.ridge_flop_per_byte(1, 1e12) == 5);
  CHECK(m.ridge_flop_per_byte(1, 1e12) == m.ridge_flop_per_byte(1));
}

TEST_CASE("machine levels: private levels grow with the cores in use, the shared L3 does not") {
  prof::MachinePeak m = synthetic();
  // 2 threads on 2 cores: two L1s and two L2s between them.
  check_roof(m.roof_for(2, 64 * kKiB), "L1", 400);
  check_roof(m.roof_for(2, 64 * kKiB + 1), "L2", 190);
  check_roof(m.roof_for(2, 2 * kMiB), "L2", 190);
  check_roof(m.roof_for(2, 2 * kMiB + 1), "L3", 90);
  check_roof(m.roof_for(2, 32 * kMiB), "L3", 90);
  check_roof(m.roof_for(2, 32 * kMiB + 1), "DRAM", 40);
  // More threads than were measured: the last row, its capacities included.
  check_roof(m.roof_for(8, 64 * kKiB), "L1", 400);
  check_roof(m.roof_for(8, 64 * kKiB + 1), "L2", 190);
  const std::vector<prof::LevelRoof> roofs = m.level_roofs(2);
  REQUIRE(roofs.size() == 3);
  CHECK(roofs[0].level == "L1");
  CHECK(roofs[0].capacity_bytes == 64 * kKiB);
  CHECK(roofs[1].capacity_bytes == 2 * kMiB);
  CHECK(roofs[2].capacity_bytes == 32 * kMiB);
  CHECK(roofs[2].gbps == 90);
  // One core with two hyperthreads: the 2 threads share one L1 and one L2.
  m.physical_cores = 1;
  check_roof(m.roof_for(2, 32 * kKiB), "L1", 400);
  check_roof(m.roof_for(2, 32 * kKiB + 1), "L2", 190);
  check_roof(m.roof_for(2, 1 * kMiB + 1), "L3", 90);
}

TEST_CASE("machine levels: unknown levels fall back to DRAM") {
  prof::MachinePeak m = synthetic();
  for (prof::ThreadLimits& row : m.rows) row.levels.clear();
  check_roof(m.roof_for(1, 1000), "DRAM", 20);
  check_roof(m.roof_for(2, 1000), "DRAM", 40);
  CHECK(m.level_roofs(1).empty());
  // Nothing measured at all: DRAM at 0 GB/s, and no ridge.
  const prof::MachinePeak empty;
  check_roof(empty.roof_for(1, 1000), "DRAM", 0);
  CHECK(empty.ridge_flop_per_byte(1, 1000) == 0);
  // A level whose size is unknown (0) is skipped: the set goes on to the next known one.
  m = synthetic();
  m.caches.l1d = 0;
  check_roof(m.roof_for(1, 1000), "L2", 100);
  // roof_among skips levels without a bandwidth too, and keeps their order.
  const std::vector<prof::LevelRoof> levels = {{"L1", 1000, 0}, {"L2", 5000, 70}};
  check_roof(prof::roof_among(levels, 10, 9), "L2", 70);
  check_roof(prof::roof_among(levels, 5001, 9), "DRAM", 9);
  check_roof(prof::roof_among({}, 10, 9), "DRAM", 9);
}

TEST_CASE("machine levels: working sets are half of what the threads hold between them") {
  CHECK(prof::level_working_set_bytes(48 * kKiB, true, 1, 2) == 24 * kKiB);
  CHECK(prof::level_working_set_bytes(48 * kKiB, true, 2, 2) == 48 * kKiB);
  CHECK(prof::level_working_set_bytes(48 * kKiB, true, 4, 2) == 48 * kKiB);  // 2 cores only
  CHECK(prof::level_working_set_bytes(32 * kMiB, false, 1, 2) == 16 * kMiB);
  CHECK(prof::level_working_set_bytes(32 * kMiB, false, 2, 2) == 16 * kMiB);
  CHECK(prof::level_working_set_bytes(int64_t{8} << 30, false, 1, 1) == int64_t{1} << 30);
  // A shared level past the private L2s: at most 4 x their total, whatever its reported size.
  CHECK(prof::level_working_set_bytes(480 * kMiB, false, 1, 2, 2 * kMiB) == 16 * kMiB);
  CHECK(prof::level_working_set_bytes(480 * kMiB, false, 2, 2, 2 * kMiB) == 16 * kMiB);
  CHECK(prof::level_working_set_bytes(8 * kMiB, false, 1, 2, 2 * kMiB) == 4 * kMiB);
}

TEST_CASE("machine levels: the JSON round trip keeps every level figure") {
  const prof::MachinePeak m = synthetic();
  const prof::MachinePeak back = prof::machine_from_json(prof::machine_to_json(m));
  REQUIRE(back.rows.size() == 2);
  for (size_t r = 0; r < 2; ++r) {
    REQUIRE(back.rows[r].levels.size() == 3);
    for (size_t i = 0; i < 3; ++i) {
      const prof::LevelRate &a = m.rows[r].levels[i], &b = back.rows[r].levels[i];
      CHECK(b.level == a.level);
      CHECK(b.working_set_bytes == a.working_set_bytes);
      CHECK(b.gbps.best == a.gbps.best);
      CHECK(b.gbps.median == a.gbps.median);
      CHECK(b.gbps.worst == a.gbps.worst);
      CHECK(b.gbps.reps == a.gbps.reps);
    }
  }
  check_roof(back.roof_for(2, 2 * kMiB), "L2", 190);
  // A row may list fewer levels (a cache of unknown size is not measured), even none.
  nlohmann::json partial = nlohmann::json::array();
  partial.push_back({{"level", "L2"},
                     {"working_set_bytes", 4096},
                     {"gbps", {{"best", 9}, {"median", 8}, {"worst", 7}, {"reps", 3}}}});
  CHECK(prof::machine_from_json(with_levels(partial)).rows[0].levels.size() == 1);
  CHECK(prof::machine_from_json(with_levels(nlohmann::json::array())).rows[0].levels.empty());
}

TEST_CASE("machine levels: a malformed level entry is a clear error") {
  const nlohmann::json good = {{"level", "L1"},
                               {"working_set_bytes", 16384},
                               {"gbps", {{"best", 9}, {"median", 8}, {"worst", 7}, {"reps", 3}}}};
  auto one = [&](const char* key, const nlohmann::json& value) {
    nlohmann::json e = good;
    if (value.is_null()) {
      e.erase(key);
    } else {
      e[key] = value;
    }
    return nlohmann::json::array({e});
  };
  std::string err = json_error(with_levels(one("level", "L4")));
  CHECK(err.find("machine JSON: row 1 level entry 0") != std::string::npos);
  CHECK(err.find("\"L4\" is not L1, L2 or L3") != std::string::npos);
  err = json_error(with_levels(one("gbps", nullptr)));
  CHECK(err.find("row 1 level entry 0") != std::string::npos);
  CHECK(err.find("gbps") != std::string::npos);
  err = json_error(with_levels(one("working_set_bytes", "big")));
  CHECK(err.find("row 1 level entry 0") != std::string::npos);
  err = json_error(with_levels(one("working_set_bytes", 0)));
  CHECK(err.find("must be positive") != std::string::npos);
  // Out of order, or twice.
  nlohmann::json l2 = good;
  l2["level"] = "L2";
  err = json_error(with_levels(nlohmann::json::array({l2, good})));
  CHECK(err.find("row 1 level entry 1") != std::string::npos);
  CHECK(err.find("out of order or repeated") != std::string::npos);
  CHECK_FALSE(json_error(with_levels(nlohmann::json::array({good, good}))).empty());
  err = json_error(with_levels("L1"));
  CHECK(err.find("row 1: \"levels\" must be an array") != std::string::npos);
  // A row without "levels" at all: written by an older build (its key says method 2).
  nlohmann::json j = nlohmann::json::parse(prof::machine_to_json(synthetic()));
  j["rows"][1].erase("levels");
  err = json_error(j.dump());
  CHECK(err.find("levels") != std::string::npos);

  // In the cache file: a warning naming the entry, and a new measurement.
  TempDir dir;
  const std::string path = dir.file("machine.json");
  const std::string key = synthetic().key;
  nlohmann::json bad = nlohmann::json::parse(with_levels(one("level", "L4")));
  const nlohmann::json cache{
      {"format", "prism-machine-cache"}, {"version", 1}, {"machines", {{key, bad}}}};
  std::ofstream(path) << cache.dump();
  std::string warning;
  CHECK_FALSE(prof::read_machine_cache(path, key, &warning).has_value());
  CHECK(warning.find("bad entry") != std::string::npos);
  CHECK(warning.find("\"L4\"") != std::string::npos);
}

TEST_CASE("machine levels: figures measured under load are measured again once it is quiet") {
  // Measured under load (>= 1), quiet now (< 1): again. Anything else keeps the cache.
  CHECK(prof::remeasure_when_quiet(1.5, 0.3));
  CHECK(prof::remeasure_when_quiet(prof::kBusyLoad, 0.99));
  CHECK(prof::remeasure_when_quiet(8.0, 0.0));
  CHECK_FALSE(prof::remeasure_when_quiet(0.5, 0.1));  // measured quiet
  CHECK_FALSE(prof::remeasure_when_quiet(1.5, 1.0));  // still busy
  CHECK_FALSE(prof::remeasure_when_quiet(3.0, 2.0));
  CHECK_FALSE(prof::remeasure_when_quiet(1.5, -1));  // load unknown now
  CHECK_FALSE(prof::remeasure_when_quiet(-1, 0.1));  // unknown then (an older entry)

  // Through load_or_measure, with the load it judges by given.
  TempDir dir;
  const std::string path = dir.file("machine.json");
  prof::MachinePeak busy = synthetic();
  busy.key = prof::describe_machine().key;
  busy.load_avg = 3.5;
  prof::write_machine_cache(path, busy);
  const prof::MachineLookup still_busy = prof::load_or_measure(path, tiny(2), false, 2.0);
  CHECK(still_busy.from_cache);
  CHECK_FALSE(still_busy.remeasured_quiet);
  CHECK(still_busy.peak.load_avg == 3.5);
  const prof::MachineLookup quiet = prof::load_or_measure(path, tiny(1), false, 0.2);
  CHECK_FALSE(quiet.from_cache);
  CHECK(quiet.remeasured_quiet);
  CHECK(quiet.cached_load == 3.5);
  CHECK(quiet.saved);
  CHECK(quiet.peak.measured_at != busy.measured_at);
  // A quiet entry stays cached whatever the load now.
  prof::MachinePeak calm = synthetic();
  calm.key = busy.key;
  prof::write_machine_cache(path, calm);
  const prof::MachineLookup kept = prof::load_or_measure(path, tiny(1), false, 0.2);
  CHECK(kept.from_cache);
  CHECK_FALSE(kept.remeasured_quiet);
}

TEST_CASE("machine levels: a tiny measurement has a sane row per known cache level") {
  const prof::MachinePeak m = prof::measure_machine(tiny(2));
  std::vector<std::string> known;
  if (m.caches.l1d > 0) known.push_back("L1");
  if (m.caches.l2 > 0) known.push_back("L2");
  if (m.caches.l3 > 0) known.push_back("L3");
  REQUIRE(m.rows.size() == 2);
  for (const prof::ThreadLimits& row : m.rows) {
    REQUIRE(row.levels.size() == known.size());
    for (size_t i = 0; i < known.size(); ++i) {
      const prof::LevelRate& l = row.levels[i];
      CHECK(l.level == known[i]);
      // Half the level, capped at half the STREAM set (3 x 256 KiB / 2), in whole doubles.
      CHECK(l.working_set_bytes > 0);
      CHECK(l.working_set_bytes <= 384 * kKiB);
      CHECK(l.working_set_bytes % 8 == 0);
      CHECK(std::isfinite(l.gbps.best));
      CHECK(l.gbps.worst > 0);
      CHECK(l.gbps.worst <= l.gbps.median);
      CHECK(l.gbps.median <= l.gbps.best);
      CHECK(l.gbps.reps == 3);
    }
  }
  if (!known.empty()) CHECK(m.roof_for(1, 1).level == known.front());
  prof::MeasureOptions bad = tiny(1);
  bad.level_seconds = 0;
  CHECK_THROWS_AS(prof::measure_machine(bad), std::invalid_argument);
}

TEST_CASE("machine levels: the triad repeats its passes and counts each") {
  prof::StreamArrays arrays(3 * 1024 * 8, 2);  // 3072 doubles per array
  const prof::KernelRun one = arrays.triad(2, 1);
  const prof::KernelRun five = arrays.triad(2, 5);
  CHECK(five.work == 5 * one.work);
  CHECK(one.work == 3.0 * 3072 * 8);
  CHECK(five.checksum == 4 * 7);  // a = 1 + 3 x 2 in every pass
  CHECK(five.thread_rate > 0);
  CHECK_THROWS_AS(arrays.triad(1, 0), std::invalid_argument);
}
