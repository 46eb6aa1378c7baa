// The results fuzz target's inputs in the normal suite (tests/fuzz/fuzz_regressions.h): the
// files compare, gate and report read (tests/fuzz/fuzz_results.cpp).
#define PRISM_FUZZ_NO_MAIN
#include "tests/fuzz/fuzz_regressions.h"
#include "tests/fuzz/fuzz_results.cpp"

TEST_CASE("fuzz inputs: result-file seeds and regressions read or throw prism::Error") {
  prism::fuzz_test::run_target("results", prism::fuzz::results_input);
}
