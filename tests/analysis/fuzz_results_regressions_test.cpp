// The results fuzz target's inputs in the normal suite (tests/fuzz/fuzz_regressions.h): the
// files compare, gate and report read (tests/fuzz/fuzz_results.cpp).
#define PRISM_FUZZ_NO_MAIN
#include "tests/fuzz/fuzz_regressions.h"
#include "tests/fuzz/fuzz_results.cpp"

TEST_CASE("fuzz inputs: result-file seeds and regressions read or throw prism::Error") {
  prism::fuzz_test::run_target("results", prism::fuzz::results_input);
}

// The target counts a file accepted when either reader takes it; each reader must also take the
// seeds written for it, or the fuzzer would start with none of that reader's valid inputs.
TEST_CASE("fuzz inputs: each reader accepts the result-file seeds written for it") {
  const std::string dir = std::string(PRISM_SOURCE_DIR) + "/tests/fuzz/corpus/results/";
  for (const char* seed : {"bench", "train", "profile", "bench_unknown_peak"}) {
    CAPTURE(seed);
    CHECK_NOTHROW(prism::analysis::load_run(dir + seed));
  }
  for (const char* seed : {"profile", "compare", "gate"}) {
    CAPTURE(seed);
    const nlohmann::json doc = prism::analysis::html::load_json(dir + seed);
    CHECK_NOTHROW(prism::analysis::html::result_block(
        seed, doc, [](int) { return prism::analysis::html::RooflinePeaks{}; }));
  }
}
