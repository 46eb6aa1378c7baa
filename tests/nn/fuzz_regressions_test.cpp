// The fuzz targets' inputs in the normal suite: every file of the seed corpus
// (tests/fuzz/corpus/<target>/) and every crashing input the fuzzers found
// (tests/fuzz/regressions/<target>/, once fixed) goes through the same entry point as under
// libFuzzer (the target's code is included here), which must return or throw prism::Error
// inside, never crash, abort on a finding or throw anything else. Seeds named bad_* must be
// rejected, the other seeds accepted, so the corpus stays what its names say. The command-line
// target (fuzz_cli) links the CLI's parse library, so its files are not run here.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#define PRISM_FUZZ_NO_MAIN
#include "tests/fuzz/fuzz_idx.cpp"
#include "tests/fuzz/fuzz_safetensors.cpp"
#include "tests/fuzz/fuzz_text.cpp"

namespace {

namespace fs = std::filesystem;

// The files of tests/fuzz/<dir>/<target>/, sorted; none if the directory does not exist.
std::vector<fs::path> fuzz_files(const char* dir, const char* target) {
  std::vector<fs::path> out;
  const fs::path root = fs::path(PRISM_SOURCE_DIR) / "tests" / "fuzz" / dir / target;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    if (e.is_regular_file()) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<uint8_t> read_bytes(const fs::path& p) {
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

}  // namespace

TEST_CASE("fuzz inputs: safetensors seeds and regressions read or throw prism::Error") {
  run_target("safetensors", prism::fuzz::safetensors_input);
}

TEST_CASE("fuzz inputs: IDX seeds and regressions (raw and gzip) read or throw prism::Error") {
  run_target("idx", prism::fuzz::idx_input);
}

TEST_CASE("fuzz inputs: text seeds and regressions load or throw prism::Error") {
  run_target("text", prism::fuzz::text_input);
}
