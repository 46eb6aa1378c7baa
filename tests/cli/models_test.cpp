// `prism models` as a user runs it: a row per model and mode, findings, JSON, exit codes.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "tests/cli/cli_run.h"

using namespace prism::cli_test;

TEST_CASE("prism models mlp cnn: a row per model and mode, op classes, memory, findings, JSON") {
  TempDir dir;
  const RunResult r = run_prism(
      "models mlp cnn --batch 2 --rounds 1 --duration 0.05 --no-peak --json m.json", dir.path());
  REQUIRE(r.exited);
  CHECK_MESSAGE(r.code == 0, r.err);
  int rows = 0;
  for (const char* line :
       {"  mlp    train", "  mlp    infer", "  cnn    train", "  cnn    infer"}) {
    if (contains(r.out, line)) ++rows;
  }
  CHECK_MESSAGE(rows == 4, r.out);
  for (const std::string s :
       {"time/sample", "95% interval", "fwd FLOP/sample", "act/sample", "time by op class",
        "matmul", "conv", "tracked memory at the peak", "parameter", "gradient",
        "findings:", "backward / forward FLOPs", "activation memory per sample", "no machine peak",
        "269,322", "wrote m.json"}) {
    CHECK_MESSAGE(contains(r.out, s), s);
  }
  // A dominant-class finding per model (which class wins is the machine's to say).
  CHECK((contains(r.out, "  - mlp is ") || contains(r.out, "  - mlp: ")));
  CHECK((contains(r.out, "  - cnn is ") || contains(r.out, "  - cnn: ")));
  const auto doc = nlohmann::json::parse(read_file(dir / "m.json"));
  CHECK(doc["kind"] == "prism.models");
  REQUIRE(doc["models"].size() == 2);
  CHECK(doc["models"][0]["model"] == "mlp");
  CHECK(doc["models"][0]["parameters"] == 269322);
  CHECK(doc["models"][1]["train"]["samples_ns"].size() >= 3);
  CHECK(doc["models"][1]["infer"]["counters"]["flops"] > 0);
  CHECK(doc["findings"].size() >= 4);
}

TEST_CASE("prism models: bad input exits 2 with a message, before any work") {
  TempDir dir;
  const RunResult unknown = run_prism("models mlp nosuch --no-peak", dir.path());
  CHECK(unknown.code == 2);
  CHECK(contains(unknown.err, "nosuch"));
  CHECK(contains(unknown.err, "transformer"));  // the zoo's list
  const RunResult twice = run_prism("models mlp cnn mlp --no-peak", dir.path());
  CHECK(twice.code == 2);
  CHECK(contains(twice.err, "mlp is named twice"));
  const RunResult alias = run_prism("models lenet cnn --no-peak", dir.path());
  CHECK(alias.code == 2);
  CHECK(contains(alias.err, "same model"));
  const RunResult fixed = run_prism("models mlp resnet18 --match params --no-peak", dir.path());
  CHECK(fixed.code == 2);
  CHECK(contains(fixed.err, "cannot scale resnet18"));
  const RunResult match = run_prism("models mlp cnn --match widths --no-peak", dir.path());
  CHECK(match.code == 2);
  CHECK(contains(match.err, "--match"));
  const RunResult batch = run_prism("models mlp cnn --batch 0 --no-peak", dir.path());
  CHECK(batch.code == 2);
  CHECK(contains(batch.err, "--batch"));
  const RunResult none = run_prism("models --no-peak", dir.path());
  CHECK(none.code == 2);
  // Issue 16's hostile test: --block with no GPT among the models was dropped silently.
  const RunResult block = run_prism("models mlp cnn --block 5 --no-peak", dir.path());
  CHECK(block.code == 2);
  CHECK(contains(block.err, "none of the models has one"));
  const RunResult json = run_prism("models mlp --no-peak --json nodir/m.json", dir.path());
  CHECK(json.code != 0);
  CHECK(contains(json.err, "nodir"));
  CHECK_FALSE(fs::exists(dir / "nodir"));
}

TEST_CASE("prism models mlp transformer --match params: the width chosen and attention's trend") {
  TempDir dir;
  const RunResult r = run_prism(
      "models mlp transformer --match params --block 8 --batch 2 --rounds 1 --duration 0.02 "
      "--no-peak",
      dir.path());
  REQUIRE(r.exited);
  CHECK_MESSAGE(r.code == 0, r.err);
  CHECK(contains(r.out, "transformer width 128 -> "));
  CHECK(contains(r.out, "(target 269,322), within"));
  CHECK(contains(r.out, "attention's share of the training step:"));
  for (const char* ctx : {"at context 4", "at context 8", "at context 16"}) {
    CHECK_MESSAGE(contains(r.out, ctx), ctx);
  }
}
