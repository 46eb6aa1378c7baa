// `prism train --precision bf16` and `prism compare ... --b "--precision bf16"`: the step runs
// under the autocast policy (bf16 GEMM rows and cast rows in the profile), the summary and the
// JSON say the precision, the loss stays near the float32 run's; bad values are usage errors.
#include <cmath>

#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "tests/test_util.h"

using namespace prism::cli_test;
using nlohmann::json;

TEST_CASE("prism train --precision bf16: bf16 GEMMs in the profile, precision in the JSON") {
  TempDir dir;
  const std::string common = "train mlp --data spirals --steps 4 --threads 1 --profile-steps 1 ";
  const RunResult f32 = run_prism(common + "--json a.json", dir.path());
  const RunResult bf16 = run_prism(common + "--precision bf16 --json b.json", dir.path());
  INFO(prism::testing::info_text(bf16.out, bf16.err));
  REQUIRE(f32.code == 0);
  REQUIRE(bf16.code == 0);
  CHECK(contains(bf16.out, "precision bf16: matmuls and convolutions in bfloat16"));
  CHECK_FALSE(contains(f32.out, "precision bf16"));
  const json a = json::parse(read_file(dir / "a.json")), b = json::parse(read_file(dir / "b.json"));
  CHECK(a.at("train").at("precision") == "fp32");
  CHECK(b.at("train").at("precision") == "bf16");
  bool bf16_gemm = false, cast_row = false, f32_gemm = false;
  for (const json& op : b.at("ops")) {
    bf16_gemm = bf16_gemm || op.at("name") == "matmul_bf16";
    cast_row = cast_row || op.at("name") == "cast";
    f32_gemm = f32_gemm || op.at("name") == "matmul";
  }
  CHECK(bf16_gemm);
  CHECK(cast_row);
  CHECK_FALSE(f32_gemm);
  // Four steps from the same weights: the losses agree to bf16's rounding (2% stated in
  // tests/nn/bf16_train_test.cpp).
  const double la = a.at("train").at("final_loss"), lb = b.at("train").at("final_loss");
  CHECK(std::abs(la - lb) <= 0.02 * la);
}

TEST_CASE("prism train/compare --precision: bad values are usage errors") {
  TempDir dir;
  const RunResult bad =
      run_prism("train mlp --data spirals --steps 1 --precision fp16", dir.path());
  CHECK(bad.code != 0);
  CHECK(contains(bad.err, "--precision"));
  const RunResult side =
      run_prism("compare mlp --mode train --a \"\" --b \"--precision fp8\"", dir.path());
  CHECK(side.code != 0);
  CHECK(contains(side.err, "--precision"));
}
