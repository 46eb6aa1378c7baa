// `prism train` and `prism summary`: training reaches an accuracy, writes its JSON train block,
// saves and loads weights; summaries give the well-known counts; bad input is a clear error.
#include <regex>

#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "kernels/gpu_runtime.h"
#include "tests/test_util.h"

using namespace prism::cli_test;
using nlohmann::json;

namespace {

double last_match(const std::string& out, const std::regex& re) {
  double v = -1;
  for (auto it = std::sregex_iterator(out.begin(), out.end(), re); it != std::sregex_iterator();
       ++it) {
    v = std::stod((*it)[1].str());
  }
  return v;
}

}  // namespace

TEST_CASE("prism train mlp on spirals reaches a high test accuracy") {
  TempDir dir;
  const RunResult r = run_prism("train mlp --data spirals --steps 300 --threads 1", dir.path());
  INFO(prism::testing::info_text(r.out, r.err));
  REQUIRE(r.exited);
  REQUIRE(r.code == 0);
  CHECK(contains(r.out, "samples/s"));
  const double acc = last_match(r.out, std::regex(R"(test: accuracy ([0-9.]+)%)"));
  CHECK(acc > 90.0);
}

TEST_CASE("prism train --json writes the profile and a train block") {
  TempDir dir;
  const RunResult r = run_prism(
      "train cnn --data shapes --steps 12 --threads 1 --json p.json --profile-steps 3", dir.path());
  INFO(prism::testing::info_text(r.out, r.err));
  REQUIRE(r.code == 0);
  const json j = json::parse(read_file(dir / "p.json"));
  const json& t = j.at("train");
  CHECK(t.at("model") == "cnn");
  CHECK(t.at("batch") == 64);
  CHECK(t.at("threads") == 1);
  CHECK(t.at("steps") == 12);
  CHECK(t.at("step_ms").at("median").get<double>() > 0);
  CHECK(t.at("step_ms").at("min").get<double>() <= t.at("step_ms").at("median").get<double>());
  CHECK(t.at("step_ms").at("max").get<double>() >= t.at("step_ms").at("median").get<double>());
  CHECK(t.at("test_accuracy").get<double>() >= 0);
  CHECK(t.at("final_loss").get<double>() > 0);
  CHECK(j.at("ops").is_array());
  CHECK(j.at("meta").at("threads") == 1);
  CHECK(contains(r.out, "prism module tree"));
}

TEST_CASE("prism train saves weights that a later run loads") {
  TempDir dir;
  const RunResult a =
      run_prism("train mlp --data spirals --steps 20 --save w.safetensors", dir.path());
  INFO(prism::testing::info_text(a.out, a.err));
  REQUIRE(a.code == 0);
  REQUIRE(fs::exists(dir / "w.safetensors"));
  const RunResult b =
      run_prism("train mlp --data spirals --steps 1 --load w.safetensors", dir.path());
  CHECK(b.code == 0);
  // A checkpoint of another model is refused with a message naming the file.
  const RunResult c =
      run_prism("train cnn --data shapes --steps 1 --load w.safetensors", dir.path());
  CHECK(c.code == 1);
  CHECK(contains(c.err, "w.safetensors"));
}

TEST_CASE("prism train transformer on text reports validation loss and a sample") {
  TempDir dir;
  const RunResult r = run_prism("train transformer --steps 8 --batch 4 --block 16", dir.path());
  INFO(prism::testing::info_text(r.out, r.err));
  REQUIRE(r.code == 0);
  CHECK(contains(r.out, "validation: loss"));
  CHECK(contains(r.out, "unigram entropy"));
  CHECK(contains(r.out, "sample:"));
}

TEST_CASE("prism train rejects bad models, data and mismatches") {
  TempDir dir;
  // An unknown model is a usage error, found before any data set is loaded.
  const RunResult unknown = run_prism("train nosuchmodel --steps 1", dir.path());
  CHECK(unknown.code == 2);
  CHECK(contains(unknown.err, "unknown model 'nosuchmodel'"));
  CHECK(contains(unknown.err, "resnet18"));  // the error lists the models
  const RunResult nodata = run_prism("train mlp --data no/such/place --steps 1", dir.path());
  CHECK(nodata.code == 1);
  CHECK(contains(nodata.err, "no/such/place"));
  const RunResult mismatch = run_prism("train cnn --data text --steps 1", dir.path());
  CHECK(mismatch.code == 2);
  const RunResult missing = run_prism("train", dir.path());
  CHECK(missing.code == 2);
  const RunResult badopt = run_prism("train mlp --optimizer rmsprop", dir.path());
  CHECK(badopt.code == 2);
  const RunResult baddevice = run_prism("train mlp --device tpu --steps 1", dir.path());
  CHECK(baddevice.code == 2);
}

TEST_CASE("prism train --device cuda trains on the GPU, or says why it cannot") {
  TempDir dir;
  const RunResult r =
      run_prism("train mlp --data spirals --steps 20 --device cuda --json p.json", dir.path());
  if (!prism::kernels::gpu::available()) {
    CHECK(r.code == 1);
    CHECK(contains(r.err, "--device cuda: CUDA is not available"));
    CHECK(contains(r.err, prism::kernels::gpu::unavailable_reason()));
    return;
  }
  REQUIRE(r.code == 0);
  const json j = json::parse(read_file(dir.path() / "p.json"));
  CHECK(j["train"]["device"] == "cuda");
  bool gpu_rows = false;
  for (const json& row : j["ops"]) gpu_rows = gpu_rows || row["device"] == "cuda";
  CHECK(gpu_rows);
}

TEST_CASE("prism train prints each kernel choice once, whatever devices the op is on") {
  // An op is registered once per device, and the CUDA backend, once loaded, adds its own copy
  // of every op: the "kernels:" line must still name each choice once. Naming matmul's GPU-only
  // "tiled" loads the backend where the build has one, so the ops are then on both devices.
  const bool cuda_ops = prism::kernels::gpu::built() && prism::kernels::gpu::load_backend();
  const std::string matmul = cuda_ops ? "tiled" : "naive";
  TempDir dir;
  const RunResult r =
      run_prism("train mlp --data spirals --steps 1 --threads 1 --kernel matmul=" + matmul +
                    " --kernel softmax=naive --kernel cross_entropy=naive "
                    "--kernel softmax=naive",
                dir.path());
  INFO(prism::testing::info_text(r.out, r.err));
  REQUIRE(r.code == 0);
  // cross_entropy's naive-tagged variant is called "composed"; sorted by op; softmax named twice
  // on the command line is still one choice.
  const std::string line = "kernels: cross_entropy=composed,matmul=" + matmul + ",softmax=naive\n";
  CHECK(contains(r.out, line));
  CHECK(r.out.find("kernels:") == r.out.rfind("kernels:"));  // one line
}

TEST_CASE("prism summary gives the well-known parameter and MAC counts quickly") {
  TempDir dir;
  const RunResult r = run_prism("summary resnet50 --depth 1", dir.path());
  INFO(prism::testing::info_text(r.out, r.err));
  REQUIRE(r.code == 0);
  CHECK(contains(r.out, "25,557,032"));
  CHECK(contains(r.out, "4,089,184,256 MACs"));
  const double secs = last_match(r.out, std::regex(R"(summary computed in ([0-9.]+) s)"));
  CHECK(secs >= 0);
  const RunResult cnn = run_prism("summary cnn", dir.path());
  REQUIRE(cnn.code == 0);
  CHECK(contains(cnn.out, "[1,16,26,26]"));  // conv1's output shape
  CHECK(contains(cnn.out, "12,810"));
  const RunResult custom = run_prism("summary resnet18 --input 2x3x64x64", dir.path());
  REQUIRE(custom.code == 0);
  CHECK(contains(custom.out, "[2,3,64,64]"));
  const RunResult bad = run_prism("summary resnet18 --input 2xbig", dir.path());
  CHECK(bad.code == 2);
  const RunResult wrong = run_prism("summary resnet18 --input 1x5x32x32", dir.path());
  CHECK(wrong.code == 1);  // 5 channels into a 3-channel model: a shape error, not a crash
  CHECK(contains(wrong.err, "[1,5,32,32]"));
}

TEST_CASE("prism train: a batch larger than the data set and a negative seed are usage errors") {
  TempDir dir;
  // Spirals has fewer than 5000 training points: no full batch exists (this used to
  // dereference an empty optional, then fail with an unrelated message).
  const RunResult big = run_prism("train mlp --data spirals --steps 2 --batch 5000", dir.path());
  REQUIRE(big.exited);
  CHECK(big.code == 2);
  CHECK(
      contains(big.err, "--batch 5000 is larger than the training set: 3000 examples in spirals"));
  const RunResult seed = run_prism("train mlp --data spirals --steps 2 --seed -1", dir.path());
  CHECK(seed.code == 2);
  CHECK(contains(seed.err, "--seed"));
  const RunResult lab_seed = run_prism("lab relu --seed -1", dir.path());
  CHECK(lab_seed.code == 2);
}

TEST_CASE("prism train --checkpoint: the recompute shows as its own phase, the loss is unchanged") {
  TempDir dir;
  const std::string common = "train transformer --steps 2 --batch 2 --block 16 --threads 1 ";
  const RunResult plain = run_prism(common + "--json a.json --profile-steps 1", dir.path());
  const RunResult ckpt =
      run_prism(common + "--checkpoint every-2 --json b.json --profile-steps 1", dir.path());
  INFO(prism::testing::info_text(ckpt.out, ckpt.err));
  REQUIRE(plain.code == 0);
  REQUIRE(ckpt.code == 0);
  // The same seed, weights and masks: the same losses, to the last printed digit.
  const json a = json::parse(read_file(dir / "a.json")), b = json::parse(read_file(dir / "b.json"));
  CHECK(a.at("train").at("final_loss") == b.at("train").at("final_loss"));
  CHECK(contains(ckpt.out, "rec: forward ops run again in backward"));
  CHECK_FALSE(contains(plain.out, "rec: forward ops run again in backward"));
  bool recompute_row = false;
  for (const json& op : b.at("ops")) recompute_row = recompute_row || op.at("phase") == "recompute";
  CHECK(recompute_row);
}
