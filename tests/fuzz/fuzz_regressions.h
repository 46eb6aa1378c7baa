// What the fuzz regression tests share: every file of a target's seed corpus
// (tests/fuzz/corpus/<target>/) and of its fixed crashes (tests/fuzz/regressions/<target>/) goes
// through the same entry point as under libFuzzer, which must return or throw prism::Error inside,
// never crash, abort on a finding or throw anything else. Seeds named bad_* must be rejected, the
// other seeds accepted, so the corpus stays what its names say. Included by the suite that links
// each target's code: tests/nn (safetensors, idx, text, checkpoint), tests/analysis (results).
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace prism::fuzz_test {

namespace fs = std::filesystem;

// The files of tests/fuzz/<dir>/<target>/, sorted; none if the directory does not exist.
inline std::vector<fs::path> fuzz_files(const char* dir, const char* target) {
  std::vector<fs::path> out;
  const fs::path root = fs::path(PRISM_SOURCE_DIR) / "tests" / "fuzz" / dir / target;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    if (e.is_regular_file()) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline std::vector<uint8_t> read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  REQUIRE(in);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}

template <class Entry>
void run_target(const char* target, Entry entry) {
  const std::vector<fs::path> seeds = fuzz_files("corpus", target);
  CHECK(seeds.size() >= 3);
  for (const fs::path& p : seeds) {
    CAPTURE(p.string());
    const std::vector<uint8_t> bytes = read_bytes(p);
    bool accepted = false;
    CHECK_NOTHROW(accepted = entry(bytes.data(), bytes.size()));
    const bool bad = p.filename().string().rfind("bad_", 0) == 0;
    CHECK(accepted == !bad);
  }
  for (const fs::path& p : fuzz_files("regressions", target)) {
    CAPTURE(p.string());
    const std::vector<uint8_t> bytes = read_bytes(p);
    CHECK_NOTHROW(entry(bytes.data(), bytes.size()));
  }
}

}  // namespace prism::fuzz_test
