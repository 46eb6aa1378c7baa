// `prism lab`: the command around the kernel lab (tests/kernels/lab_test.cpp tests the lab).
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <thread>

#include "kernels/gpu_runtime.h"
#include "profiler/machine.h"
#include "tests/cli/cli_run.h"

using namespace prism::cli_test;

TEST_CASE("prism lab matmul validates every variant and writes one JSON row per variant and size") {
  TempDir dir;
  const RunResult r = run_prism(
      "lab matmul --sizes 24x16x8,5x7x3:tn --reps 3 --min-sample-ms 0.2 --no-peak --json lab.json",
      dir.path());
  REQUIRE(r.exited);
  CHECK_MESSAGE(r.code == 0, r.err);
  CHECK(contains(r.out, "validation on"));
  CHECK(contains(r.out, "size 24x16x8"));
  const auto doc = nlohmann::json::parse(read_file(dir / "lab.json"));
  CHECK(doc["op"] == "matmul");
  int rows_24 = 0;
  for (const auto& row : doc["rows"]) {
    for (const char* key : {"variant", "size", "threads", "valid", "median_ns", "ci_low_ns",
                            "ci_high_ns", "gflops"}) {
      CHECK_MESSAGE(row.contains(key), key);
    }
    if (row["size"] == "24x16x8") ++rows_24;
  }
  CHECK(rows_24 == static_cast<int>(doc["validation"].size()));
}

TEST_CASE("prism lab --list names the ops with their size syntax") {
  TempDir dir;
  const RunResult r = run_prism("lab --list", dir.path());
  REQUIRE(r.exited);
  CHECK(r.code == 0);
  CHECK(contains(r.out, "matmul"));
  CHECK(contains(r.out, "MxKxN"));
  CHECK(contains(r.out, "attention"));
}

TEST_CASE("prism lab: unknown ops, bad sizes and unknown variants are usage errors") {
  TempDir dir;
  const RunResult op = run_prism("lab nosuch", dir.path());
  CHECK(op.code == 2);
  CHECK(contains(op.err, "the lab knows"));
  const RunResult size = run_prism("lab matmul --sizes 12x", dir.path());
  CHECK(size.code == 2);
  CHECK(contains(size.err, "bad size '12x'"));
  const RunResult variant = run_prism("lab matmul --variants nosuch", dir.path());
  CHECK(variant.code == 2);
  CHECK(contains(variant.err, "nosuch"));
  const RunResult reps = run_prism("lab matmul --reps 0", dir.path());
  CHECK(reps.code == 2);
  const RunResult none = run_prism("lab", dir.path());
  CHECK(none.code == 2);
  CHECK(contains(none.err, "--list"));
}

TEST_CASE("prism lab --device cuda without a usable GPU exits 1 saying why") {
  if (prism::kernels::gpu::available()) {
    MESSAGE("skipped: a GPU is available here (the CUDA lab is tested in tests/cuda/lab_test.cpp)");
    return;
  }
  TempDir dir;
  const RunResult r =
      run_prism("lab matmul --device cuda --sizes 8 --reps 1 --no-peak", dir.path());
  REQUIRE(r.exited);
  CHECK(r.code == 1);
  CHECK_MESSAGE(contains(r.err, "CUDA is not available"), r.err);
  // A bad op or size is still a usage error, judged before the device.
  const RunResult op = run_prism("lab nosuch --device cuda", dir.path());
  CHECK(op.code == 2);
}

TEST_CASE("prism lab --list --device cuda lists the CUDA variants without needing a GPU") {
  TempDir dir;
  const RunResult r = run_prism("lab --list --device cuda", dir.path());
  REQUIRE(r.exited);
  CHECK_MESSAGE(r.code == 0, r.err);
  CHECK(contains(r.out, "CUDA variants"));
  CHECK(contains(r.out, "matmul"));
  if (prism::kernels::gpu::built()) {
    CHECK(contains(r.out, "tiled"));  // matmul's shared-memory kernel exists only on CUDA
  } else {
    CHECK(contains(r.out, "built without CUDA"));
  }
  const RunResult bad = run_prism("lab matmul --device tpu", dir.path());
  CHECK(bad.code == 2);
}

TEST_CASE("prism lab: %roof is against the level the op's bytes fit in (synthetic cache)") {
  namespace prof = prism::profiler;
  TempDir dir;
  // Known figures under this build's key: L1 32 KiB per core at 300 GB/s, L2 1 MiB at 150,
  // L3 32 MiB at 60, DRAM 25; load 0.25 (quiet: never measured again). A row for every thread
  // count the command could ask for, so it never measures.
  prof::MachinePeak m = prof::describe_machine();
  m.caches = {32 << 10, 1 << 20, 32 << 20};
  m.physical_cores = std::max(m.physical_cores, 1);
  m.measured_at = "2026-11-26T00:00:00Z";
  m.load_avg = 0.25;
  m.stream_array_bytes = 128 << 20;
  const int rows = std::max(64, static_cast<int>(std::thread::hardware_concurrency()));
  for (int t = 1; t <= rows; ++t) {
    prof::ThreadLimits row{t, {100, 100, 100, 9}, {25, 25, 25, 9}, {20, 20, 20, 9}};
    row.levels = {{"L1", 16 << 10, {300, 300, 300, 9}},
                  {"L2", 512 << 10, {150, 150, 150, 9}},
                  {"L3", 16 << 20, {60, 60, 60, 9}}};
    m.rows.push_back(row);
  }
  prof::write_machine_cache((dir / "machine.json").string(), m);
  const std::string env = "PRISM_MACHINE_CACHE='" + (dir / "machine.json").string() + "'";
  // relu moves 8 bytes per element: 4096 elements are 32 KiB (L1), 1048576 are 8 MiB (L3).
  const RunResult r = run_prism(
      "lab relu --sizes 4096,1048576 --variants naive --threads 1 --reps 3 --min-sample-ms 0.2 "
      "--json lab.json",
      dir.path(), env);
  REQUIRE(r.exited);
  CHECK_MESSAGE(r.code == 0, r.err);
  CHECK_FALSE(contains(r.err, "measuring"));
  CHECK(contains(r.out, "bandwidth L1 300.0, L2 150.0, L3 60.0, DRAM 25.0 GB/s (prism machine)"));
  CHECK(contains(r.out, "the memory level the op's bytes fit in"));
  const auto doc = nlohmann::json::parse(read_file(dir / "lab.json"));
  REQUIRE(doc["rows"].size() == 2);
  CHECK(doc["rows"][0]["size"] == "4096");
  CHECK(doc["rows"][0]["roof_level"] == "L1");
  CHECK(doc["rows"][0]["roof_gbs"] == 300);
  CHECK(doc["rows"][1]["roof_level"] == "L3");
  CHECK(doc["rows"][1]["roof_gbs"] == 60);
  for (const auto& row : doc["rows"]) {
    const double expected = 100 * row["gbs"].get<double>() / row["roof_gbs"].get<double>();
    CHECK(row["pct_roofline"].get<double>() == doctest::Approx(expected));
  }
}
