// The machine-limits module: the microkernels count their work right, a tiny measurement gives
// sane figures, and the cache survives a round trip, a corrupt file and other builds' entries.
// Every measurement here is sized to take milliseconds.
#include "profiler/machine.h"
#include "temp_dir.h"

#include <doctest/doctest.h>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace prof = prism::profiler;
namespace fs = std::filesystem;

namespace {

// A temp dir named after this test file.
struct TempDir : prism::profiler::testing::TempDir {
  TempDir() : prism::profiler::testing::TempDir("prism_machine_test") {}
};

// Sets an environment variable for one scope and restores what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// Milliseconds in all: 3 repetitions, 0.1 ms FMA and cache-level runs, 256 KiB arrays (which
// also cap the cache levels' sets at 384 KiB).
prof::MeasureOptions tiny(int threads) {
  prof::MeasureOptions o;
  o.max_threads = threads;
  o.repetitions = 3;
  o.fma_seconds = 1e-4;
  o.stream_array_bytes = 256 << 10;
  o.level_seconds = 1e-4;
  return o;
}

bool sane(const prof::RateStats& r, int reps) {
  return std::isfinite(r.best) && r.worst > 0 && r.worst <= r.median && r.median <= r.best &&
         r.reps == reps;
}

// A measurement with made-up figures for the lookups and the cache.
prof::MachinePeak made_up(const std::string& key) {
  prof::MachinePeak m = prof::describe_machine();
  m.key = key;
  m.measured_at = "2026-11-21T12:00:00Z";
  m.load_avg = 0.25;
  m.clock = "per-thread CPU time, summed over threads";
  m.stream_array_bytes = 1 << 20;
  m.rows.push_back({1, {100, 98, 90, 9}, {25, 24, 20, 9}, {30, 29, 28, 9}});
  m.rows.push_back({2, {200, 190, 150, 9}, {40, 39, 30, 9}, {45, 44, 40, 9}});
  m.rows[1].region_us = {0.8, 0.9, 1.5, 9};  // a cost: best <= median <= worst
  m.rows[1].region_idle_us = {2, 3, 8, 9};
  return m;
}

}  // namespace

TEST_CASE("the FMA microkernel counts 2 FLOPs per lane per FMA") {
  // Accumulators x lanes x 2 per iteration: 16 x 16 x 2 with AVX-512, 12 x 8 x 2 with AVX2,
  // 64 x 1 x 2 in the portable loop.
#if defined(__AVX512F__)
  CHECK(prof::fma_flops_per_iteration() == 512);
#elif defined(__AVX2__) && defined(__FMA__)
  CHECK(prof::fma_flops_per_iteration() == 192);
#else
  CHECK(prof::fma_flops_per_iteration() == 128);
#endif
  const prof::KernelRun one = prof::run_fma_kernel(1, 1000);
  CHECK(one.work == 1000.0 * static_cast<double>(prof::fma_flops_per_iteration()));
  CHECK(one.seconds > 0);
  CHECK(std::isfinite(one.wall_rate()));
  CHECK(one.wall_rate() > 0);
  CHECK(std::isfinite(one.thread_rate));
  CHECK(one.thread_rate > 0);
  // Every accumulator converges towards 1e-3 / (1 - 0.9999) = 10 from a start of about 1: the
  // checksum is a finite positive sum, not an overflow or a NaN.
  CHECK(std::isfinite(one.checksum));
  CHECK(one.checksum > 0);
  const prof::KernelRun two = prof::run_fma_kernel(2, 1000);
  CHECK(two.work == 2 * one.work);  // each thread does the same work
  CHECK_THROWS_AS(prof::run_fma_kernel(0, 10), std::invalid_argument);
  CHECK_THROWS_AS(prof::run_fma_kernel(1, 0), std::invalid_argument);
}

TEST_CASE("STREAM triad and copy compute the right values and count their bytes") {
  prof::StreamArrays arrays(1 << 20, 2);  // 1 MiB per array: 131072 doubles
  REQUIRE(arrays.elements() == 131072);
  // b = 1, c = 2: triad a = b + 3 c = 7 everywhere; the checksum adds the first and the last
  // element of each thread's share.
  const prof::KernelRun triad = arrays.triad(2);
  CHECK(triad.work == 3.0 * 131072 * 8);
  CHECK(triad.checksum == 4 * 7);
  CHECK(triad.wall_rate() > 0);
  CHECK(triad.thread_rate > 0);
  const prof::KernelRun copy = arrays.copy(1);  // a = b = 1
  CHECK(copy.work == 2.0 * 131072 * 8);
  CHECK(copy.checksum == 2 * 1);
  // Fewer bytes than one element per thread still gives each thread an element.
  CHECK(prof::StreamArrays(1, 3).elements() == 3);
}

TEST_CASE("an OpenMP region's cost is timed, and bad arguments are refused") {
  const double awake = prof::time_empty_regions(2, 200);
  const double idle = prof::time_empty_regions(2, 3, 1.0);
  CHECK(awake > 0.01);  // a region that ran (one compiled away measured 1e-5 us)
  CHECK(awake < 10000);
  CHECK(idle > 0.01);
  CHECK_THROWS_AS(prof::time_empty_regions(1, 10), std::invalid_argument);
  CHECK_THROWS_AS(prof::time_empty_regions(2, 0), std::invalid_argument);
  CHECK_THROWS_AS(prof::time_empty_regions(2, 10, -1), std::invalid_argument);
}

TEST_CASE("a tiny measurement gives a sane row per thread count") {
  const prof::MachinePeak m = prof::measure_machine(tiny(2));
  REQUIRE(m.rows.size() == 2);
  for (int t = 1; t <= 2; ++t) {
    const prof::ThreadLimits* r = m.row(t);
    REQUIRE(r != nullptr);
    CHECK(r->threads == t);
    CHECK(sane(r->fma_gflops, 3));
    CHECK(sane(r->triad_gbps, 3));
    CHECK(sane(r->copy_gbps, 3));
    if (t == 1) {
      CHECK(r->region_us.reps == 0);  // no region at 1 thread
    } else {
      // A cost: 0 < best <= median <= worst; a sleeping team is slower to start than an
      // awake one only on the median (one idle run may beat a slow awake one on a busy box).
      CHECK(r->region_us.best > 0);
      CHECK(r->region_us.best <= r->region_us.median);
      CHECK(r->region_us.median <= r->region_us.worst);
      CHECK(r->region_idle_us.best > 0);
      CHECK(r->region_us.reps == 3);
    }
  }
  CHECK(m.stream_array_bytes == 256 << 10);
  CHECK_FALSE(m.measured_at.empty());
  CHECK(m.load_avg >= 0);  // Linux has getloadavg
  CHECK_FALSE(m.key.empty());
  CHECK(m.peak_gflops(1) == m.rows[0].fma_gflops.best);
  CHECK_THROWS_AS(prof::measure_machine(prof::MeasureOptions{1, 0, 1e-4, 1024}),
                  std::invalid_argument);
  CHECK_THROWS_AS(prof::measure_machine(prof::MeasureOptions{1, 1, 0, 1024}),
                  std::invalid_argument);
}

TEST_CASE("peak lookups by thread count and the ridge point") {
  const prof::MachinePeak m = made_up("k");
  CHECK(m.peak_gflops(1) == 100);
  CHECK(m.peak_gflops(2) == 200);
  CHECK(m.peak_gflops(8) == 200);  // beyond the measured rows: the last row
  CHECK(m.peak_gflops(0) == 100);
  CHECK(m.peak_gbps(2) == 40);
  CHECK(m.ridge_flop_per_byte(1) == 4);  // 100 GFLOP/s over 25 GB/s
  CHECK(m.row(3) == nullptr);
  const prof::MachinePeak empty;
  CHECK(empty.peak_gflops(1) == 0);
  CHECK(empty.ridge_flop_per_byte(1) == 0);
}

TEST_CASE("machine description and default STREAM size") {
  const prof::MachinePeak d = prof::describe_machine();
  CHECK_FALSE(d.cpu_model.empty());
  CHECK(d.logical_cpus >= 1);
  CHECK(d.physical_cores >= 1);
  CHECK(d.physical_cores <= d.logical_cpus);
  CHECK(d.simd == prof::simd_level());
  // The key changes with the compiler flags, so a rebuild with other flags measures again.
  CHECK(d.key.find(d.flags) != std::string::npos);
  CHECK(d.key.find(d.cpu_model) != std::string::npos);
  // 4 x L3, clamped to [64 MiB, 1 GiB].
  CHECK(prof::default_stream_array_bytes({0, 0, 32 << 20}) == int64_t{128} << 20);
  CHECK(prof::default_stream_array_bytes({0, 0, 0}) == int64_t{64} << 20);
  CHECK(prof::default_stream_array_bytes({0, 0, int64_t{1} << 30}) == int64_t{1} << 30);
}

TEST_CASE("machine JSON round trip") {
  const prof::MachinePeak m = made_up("cpu | gcc | -O3 | method 1");
  const prof::MachinePeak back = prof::machine_from_json(prof::machine_to_json(m));
  CHECK(back.key == m.key);
  CHECK(back.cpu_model == m.cpu_model);
  CHECK(back.caches.l3 == m.caches.l3);
  CHECK(back.measured_at == m.measured_at);
  CHECK(back.load_avg == 0.25);
  CHECK(back.clock == m.clock);
  REQUIRE(back.rows.size() == 2);
  CHECK(back.rows[1].threads == 2);
  CHECK(back.rows[1].fma_gflops.best == 200);
  CHECK(back.rows[1].triad_gbps.worst == 30);
  CHECK(back.rows[0].copy_gbps.median == 29);
  CHECK(back.rows[0].copy_gbps.reps == 9);
  CHECK(back.rows[1].region_us.median == 0.9);
  CHECK(back.rows[1].region_idle_us.worst == 8);
  CHECK(back.rows[0].region_us.reps == 0);
  CHECK_THROWS_AS(prof::machine_from_json("{\"key\": 3}"), std::runtime_error);
}

TEST_CASE("machine cache round trip keeps other builds' entries") {
  TempDir dir;
  const std::string path = dir.file("sub/dir/machine.json");  // directories are created
  std::string warning;
  CHECK_FALSE(prof::read_machine_cache(path, "a", &warning).has_value());  // no file yet
  CHECK(warning.empty());
  prof::write_machine_cache(path, made_up("a"));
  prof::write_machine_cache(path, made_up("b"));
  const auto a = prof::read_machine_cache(path, "a", &warning);
  const auto b = prof::read_machine_cache(path, "b", &warning);
  REQUIRE(a.has_value());
  REQUIRE(b.has_value());
  CHECK(a->key == "a");
  CHECK(b->rows[1].fma_gflops.best == 200);
  CHECK_FALSE(prof::read_machine_cache(path, "c", &warning).has_value());
  CHECK(warning.empty());
  // Written through a temporary file and a rename: nothing else is left beside it.
  int files = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(path).parent_path())) {
    CHECK(entry.path().filename() == "machine.json");
    ++files;
  }
  CHECK(files == 1);
}

TEST_CASE("a corrupt machine cache is a warning and a new measurement, never a crash") {
  TempDir dir;
  const std::string path = dir.file("machine.json");
  const std::string key = prof::describe_machine().key;
  std::string warning;

  write_text(path, "{\"format\": \"prism-machine-cache\", \"vers");  // cut short
  CHECK_FALSE(prof::read_machine_cache(path, key, &warning).has_value());
  CHECK(warning.find("is not valid JSON") != std::string::npos);
  CHECK(warning.find(path) != std::string::npos);

  write_text(path, "[1, 2, 3]");
  CHECK_FALSE(prof::read_machine_cache(path, key, &warning).has_value());
  CHECK(warning.find("is not a prism machine cache") != std::string::npos);

  write_text(path, "{\"format\": \"prism-machine-cache\", \"version\": 1, \"machines\": {\"" + key +
                       "\": {\"key\": 5}}}");
  CHECK_FALSE(prof::read_machine_cache(path, key, &warning).has_value());
  CHECK(warning.find("bad entry") != std::string::npos);

  // load_or_measure: warns, measures, and replaces the file with a good one.
  const prof::MachineLookup first = prof::load_or_measure(path, tiny(1), false);
  CHECK_FALSE(first.from_cache);
  REQUIRE(first.warnings.size() == 1);
  CHECK(first.warnings[0].find("measuring again") != std::string::npos);
  CHECK(first.peak.rows.size() == 1);
  // Now the cache answers, with the same figures. (The load average now given as unknown: had
  // the first measurement been taken under load and the machine gone quiet since, a real reading
  // would measure again; machine_levels_test.cpp tests that.)
  const prof::MachineLookup second = prof::load_or_measure(path, tiny(1), false, -1.0);
  CHECK(second.from_cache);
  CHECK(second.warnings.empty());
  CHECK(second.peak.peak_gflops(1) == first.peak.peak_gflops(1));
  CHECK(second.peak.measured_at == first.peak.measured_at);
  // More threads than the cached entry covers, or --refresh: measured again.
  const prof::MachineLookup more = prof::load_or_measure(path, tiny(2), false);
  CHECK_FALSE(more.from_cache);
  CHECK(more.peak.rows.size() == 2);
  CHECK_FALSE(prof::load_or_measure(path, tiny(1), true).from_cache);
}

TEST_CASE("a cache entry with impossible figures is refused, not printed") {
  // Issue 16's hostile test: a cached best of 0 printed a ridge point of 0.00, a negative one
  // -0.17, a best under its median "429.4 (407.7--5.0)", and 0 cores or STREAM bytes
  // "3 arrays of 0 doubles". Each is a bad entry now: a warning and a new measurement.
  TempDir dir;
  const std::string path = dir.file("machine.json");
  const std::string key = "k";
  auto refused = [&](const std::function<void(prof::MachinePeak&)>& spoil) {
    prof::MachinePeak m = made_up(key);
    spoil(m);
    fs::remove(path);
    prof::write_machine_cache(path, m);
    std::string warning;
    const bool read = prof::read_machine_cache(path, key, &warning).has_value();
    CHECK(warning.find("bad entry") != std::string::npos);
    return !read;
  };
  CHECK(refused([](prof::MachinePeak& m) { m.rows[0].triad_gbps = {0, 0, 0, 9}; }));
  CHECK(refused([](prof::MachinePeak& m) { m.rows[1].fma_gflops.best = -5; }));
  CHECK(refused([](prof::MachinePeak& m) { m.rows[1].fma_gflops.best = 100; }));  // < median
  CHECK(refused([](prof::MachinePeak& m) { m.rows[0].copy_gbps.reps = 0; }));
  CHECK(refused([](prof::MachinePeak& m) { m.logical_cpus = 0; }));
  CHECK(refused([](prof::MachinePeak& m) { m.physical_cores = -3; }));
  CHECK(refused([](prof::MachinePeak& m) { m.stream_array_bytes = -1; }));
  CHECK(refused([](prof::MachinePeak& m) { m.caches.l2 = -5; }));
  CHECK(refused([](prof::MachinePeak& m) { m.rows[1].region_us = {1.5, 0.9, 0.8, 9}; }));
  CHECK(refused([](prof::MachinePeak& m) { m.rows[1].region_idle_us = {0, 0, 0, 3}; }));
  CHECK(refused([](prof::MachinePeak& m) { m.rows[0].region_us = {1, 1, 1, 3}; }));
  // The untouched entry still reads.
  fs::remove(path);
  prof::write_machine_cache(path, made_up(key));
  CHECK(prof::read_machine_cache(path, key, nullptr).has_value());
}

TEST_CASE("a cache path that is not a regular file is a warning, never read or replaced") {
  TempDir dir;
  std::string warning;
  // A directory read as an empty file ("not valid JSON"); a device like /dev/zero was read
  // until memory ran out.
  const std::string sub = dir.file("cache_dir");
  fs::create_directories(sub);
  CHECK_FALSE(prof::read_machine_cache(sub, "k", &warning).has_value());
  CHECK(warning.find("is not a regular file") != std::string::npos);
  warning.clear();
  CHECK_FALSE(prof::read_machine_cache("/dev/zero", "k", &warning).has_value());
  CHECK(warning.find("is not a regular file") != std::string::npos);
  CHECK_THROWS_AS(prof::write_machine_cache(sub, made_up("k")), std::runtime_error);
  CHECK(fs::is_directory(sub));
}

TEST_CASE("a cache that cannot be written is a warning") {
  TempDir dir;
  const std::string blocker = dir.file("file");
  write_text(blocker, "x");
  // A path under a regular file: the directory cannot be created.
  const prof::MachineLookup r = prof::load_or_measure(blocker + "/machine.json", tiny(1), false);
  CHECK_FALSE(r.from_cache);
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].find("not cached") != std::string::npos);
  CHECK_THROWS_AS(prof::write_machine_cache(blocker + "/machine.json", made_up("a")),
                  std::runtime_error);
}

TEST_CASE("default machine cache path follows PRISM_MACHINE_CACHE, XDG_CACHE_HOME, HOME") {
  {
    ScopedEnv e1("PRISM_MACHINE_CACHE", "/some/where/m.json");
    CHECK(prof::default_machine_cache_path() == "/some/where/m.json");
  }
  ScopedEnv e1("PRISM_MACHINE_CACHE", nullptr);
  {
    ScopedEnv e2("XDG_CACHE_HOME", "/xdg");
    CHECK(prof::default_machine_cache_path() == "/xdg/prism/machine.json");
  }
  ScopedEnv e2("XDG_CACHE_HOME", nullptr);
  {
    ScopedEnv e3("HOME", "/home/someone");
    CHECK(prof::default_machine_cache_path() == "/home/someone/.cache/prism/machine.json");
  }
  ScopedEnv e3("HOME", nullptr);
  CHECK(prof::default_machine_cache_path().empty());
}

TEST_CASE("machine_peak without measuring reads the cache or gives nullptr") {
  TempDir dir;
  ScopedEnv env("PRISM_MACHINE_CACHE", dir.file("machine.json").c_str());
  // Nothing cached and measuring not allowed: unknown. (The process-wide figures are only
  // remembered once known, so this does not stop a later call from finding them.)
  CHECK(prof::machine_peak(false) == nullptr);
  prof::MachinePeak m = made_up(prof::describe_machine().key);
  prof::write_machine_cache(dir.file("machine.json"), m);
  const prof::MachinePeak* p = prof::machine_peak(false);
  REQUIRE(p != nullptr);
  CHECK(p->peak_gflops(2) == 200);
  CHECK(prof::machine_peak(false) == p);  // read once per process
}
