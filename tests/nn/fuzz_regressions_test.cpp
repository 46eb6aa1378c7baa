// The fuzz targets' inputs in the normal suite (tests/fuzz/fuzz_regressions.h): the safetensors,
// IDX, text and checkpoint targets, whose code this suite links. The command-line target
// (fuzz_cli) links the CLI library (prism_cli), which this suite does not, so its files are not
// run here; the results target runs in tests/analysis.
#define PRISM_FUZZ_NO_MAIN
#include "tests/fuzz/fuzz_regressions.h"
#include "tests/fuzz/fuzz_checkpoint.cpp"
#include "tests/fuzz/fuzz_idx.cpp"
#include "tests/fuzz/fuzz_safetensors.cpp"
#include "tests/fuzz/fuzz_text.cpp"

using prism::fuzz_test::run_target;

TEST_CASE("fuzz inputs: safetensors seeds and regressions read or throw prism::Error") {
  run_target("safetensors", prism::fuzz::safetensors_input);
}

TEST_CASE("fuzz inputs: IDX seeds and regressions (raw and gzip) read or throw prism::Error") {
  run_target("idx", prism::fuzz::idx_input);
}

TEST_CASE("fuzz inputs: text seeds and regressions load or throw prism::Error") {
  run_target("text", prism::fuzz::text_input);
}

TEST_CASE(
    "fuzz inputs: checkpoint seeds and regressions (gpt and int8) load or throw prism::Error") {
  run_target("checkpoint", prism::fuzz::checkpoint_input);
}
