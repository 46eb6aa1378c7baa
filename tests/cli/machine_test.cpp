// `prism machine`: a quick measurement prints the table and writes JSON, the cache is used and
// warned about, and bad flags are usage errors. Every run measures for milliseconds (--reps 1
// --fma-ms 0.2 --stream-mib 1) or reads a cache the test wrote.
#include <nlohmann/json.hpp>

#include "cli_run.h"

using namespace prism::cli_test;

namespace {

const char* kQuick = "machine --threads 2 --reps 2 --fma-ms 0.2 --stream-mib 1";

std::string cache_env(const TempDir& dir) {
  return "PRISM_MACHINE_CACHE='" + (dir / "cache.json").string() + "'";
}

}  // namespace

TEST_CASE("prism machine measures, prints a row per thread count and writes JSON") {
  TempDir dir;
  const RunResult r =
      run_prism(std::string(kQuick) + " --json out.json", dir.path(), cache_env(dir));
  REQUIRE(r.exited);
  CHECK(r.code == 0);
  CHECK(contains(r.out, "CPU:"));
  CHECK(contains(r.out, "SIMD:"));
  CHECK(contains(r.out, "flags:"));
  CHECK(contains(r.out, "peak GFLOP/s"));
  CHECK(contains(r.out, "triad GB/s"));
  CHECK(contains(r.out, "ridge FLOP/B"));
  CHECK(contains(r.out, "not cached"));
  // 1 MiB arrays fit in the cache, and the output says so.
  CHECK(contains(r.out, "smaller than 4 x L3"));
  // The memory levels, each with its ridge point, and how to read them.
  CHECK(contains(r.out, "memory levels"));
  for (const char* column : {"level", "capacity", "working set", "GB/s", "ridge FLOP/B"}) {
    CHECK_MESSAGE(contains(r.out, column), column);
  }
  CHECK(contains(r.out, "\nDRAM "));
  CHECK(contains(r.out, "read: a working set up to a level's capacity"));

  const auto j = nlohmann::json::parse(read_file(dir / "out.json"));
  REQUIRE(j.at("rows").size() == 2);
  CHECK(j["rows"][1]["threads"] == 2);
  CHECK(j["rows"][0]["fma_gflops"]["best"].get<double>() > 0);
  CHECK(j["rows"][0]["fma_gflops"]["reps"] == 2);
  CHECK(j["stream_array_bytes"] == 1 << 20);
  // One entry per cache level of known size, innermost first, at every thread count.
  for (const auto& row : j["rows"]) {
    REQUIRE(row.contains("levels"));
    std::string previous;
    for (const auto& level : row["levels"]) {
      const std::string name = level["level"];
      CHECK((name == "L1" || name == "L2" || name == "L3"));
      CHECK(name > previous);
      previous = name;
      CHECK(level["working_set_bytes"].get<int64_t>() > 0);
      CHECK(level["gbps"]["best"].get<double>() > 0);
      CHECK(level["gbps"]["reps"] == 2);
    }
  }
  // Settings other than the defaults never go into the cache.
  CHECK_FALSE(std::filesystem::exists(dir / "cache.json"));
}

TEST_CASE("prism machine reads its cache") {
  TempDir dir;
  // A cache entry for this build, with made-up figures: taken from a quick measurement's JSON
  // and stored under its key the way the cache file holds it.
  REQUIRE(run_prism(std::string(kQuick) + " --json m.json", dir.path(), cache_env(dir)).code == 0);
  nlohmann::json entry = nlohmann::json::parse(read_file(dir / "m.json"));
  // (All three figures: the cache refuses a best below the median or the worst.)
  entry["rows"][0]["fma_gflops"]["best"] = 123.4;
  entry["rows"][0]["fma_gflops"]["median"] = 123.4;
  entry["rows"][0]["fma_gflops"]["worst"] = 123.4;
  // Measured quiet: an entry measured under load would be measured again if the machine were
  // quiet now (the next test case).
  entry["load_avg"] = 0.25;
  const std::string key = entry["key"];
  nlohmann::json cache{{"format", "prism-machine-cache"}, {"version", 1}, {"machines", {}}};
  cache["machines"][key] = entry;
  std::ofstream(dir / "cache.json") << cache.dump();

  const RunResult cached = run_prism("machine --threads 2", dir.path(), cache_env(dir));
  REQUIRE(cached.exited);
  CHECK(cached.code == 0);
  CHECK(contains(cached.out, "123.4"));
  CHECK(contains(cached.out, "--refresh measures again"));
  CHECK_FALSE(contains(cached.err, "measuring"));
  // --threads 1 shows only the rows asked for.
  const RunResult one =
      run_prism("machine --threads 1 --json one.json", dir.path(), cache_env(dir));
  CHECK(one.code == 0);
  CHECK(nlohmann::json::parse(read_file(dir / "one.json")).at("rows").size() == 1);
  // (A corrupt cache file, which makes the command warn and measure again at full size, is
  // tested on the library in tests/profiler/machine_test.cpp with millisecond settings.)
}

TEST_CASE("prism machine rejects bad flags with a usage error") {
  TempDir dir;
  for (const char* args :
       {"machine --threads 0", "machine --threads two", "machine --reps 0", "machine --fma-ms -1",
        "machine --stream-mib 0", "machine --bogus", "machine extra"}) {
    CAPTURE(args);
    const RunResult r = run_prism(args, dir.path(), cache_env(dir));
    REQUIRE(r.exited);
    CHECK(r.code == 2);
    CHECK(contains(r.err, "prism: error:"));
  }
  // An output file that cannot be written fails before anything is measured.
  const RunResult r =
      run_prism(std::string(kQuick) + " --json no/such/dir/out.json", dir.path(), cache_env(dir));
  CHECK(r.code == 1);
  CHECK(contains(r.err, "cannot write the machine JSON"));
}

// The split rule from the cache (kernels/split_rule.h): a command that runs kernels reads the
// region cost `prism machine` measured and scales the work a thread must bring by it. With a
// region that costs a second, no op of the MLP's step splits; with this machine's own figure,
// the first layer's products do.
TEST_CASE("prism train splits its kernels by the region cost in the machine cache") {
  TempDir dir;
  REQUIRE(run_prism(std::string(kQuick) + " --json m.json", dir.path(), cache_env(dir)).code == 0);
  nlohmann::json entry = nlohmann::json::parse(read_file(dir / "m.json"));
  entry["load_avg"] = 0.25;  // measured quiet: used as it is
  auto train_threads = [&](double region_us) {
    nlohmann::json e = entry;
    e["rows"][1]["region_us"] = {
        {"best", region_us}, {"median", region_us}, {"worst", region_us}, {"reps", 3}};
    nlohmann::json cache{{"format", "prism-machine-cache"}, {"version", 1}, {"machines", {}}};
    cache["machines"][e["key"].get<std::string>()] = e;
    std::ofstream(dir / "cache.json") << cache.dump();
    const RunResult r = run_prism(
        "train mlp --data spirals --steps 3 --profile-steps 2 --batch 512 --threads 2 --json "
        "p.json",
        dir.path(), cache_env(dir));
    REQUIRE_MESSAGE(r.code == 0, r.err);
    const nlohmann::json doc = nlohmann::json::parse(read_file(dir / "p.json"));
    int most = 0;
    for (const auto& op : doc.at("ops")) most = std::max(most, op.at("threads_max").get<int>());
    return most;
  };
  CHECK(train_threads(0.5) == 2);
  CHECK(train_threads(1e6) == 1);

  // And `prism machine` prints the rule: 1e6 us over the reference's 0.85 us, rounded up.
  const RunResult m = run_prism("machine --threads 2", dir.path(), cache_env(dir));
  CHECK(contains(m.out, "work/thread"));
  CHECK(contains(m.out, "1176471x"));
}
