// `prism bench`, `prism compare` and `prism gate` as a user runs them: output, JSON, exit codes.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "tests/cli/cli_run.h"

using namespace prism::cli_test;

namespace {
const char* kQuick = "--duration 0.05 --warmup 1 --no-peak";
}

TEST_CASE("prism bench mlp: a latency table per batch size, memory by role, op classes, JSON") {
  TempDir dir;
  const RunResult r =
      run_prism(std::string("bench mlp --batch 1,3 ") + kQuick + " --json b.json", dir.path());
  REQUIRE(r.exited);
  CHECK_MESSAGE(r.code == 0, r.err);
  for (const char* s :
       {"p50", "p99", "samples/s", "cold", "95% intervals", "peak RSS", "tracked peak", "parameter",
        "time by op class", "matmul", "resident before any work", "harness"}) {
    CHECK_MESSAGE(contains(r.out, s), s);
  }
  const auto doc = nlohmann::json::parse(read_file(dir / "b.json"));
  CHECK(doc["kind"] == "prism.bench");
  CHECK(doc["batches"].size() == 2);
  CHECK(doc["batches"][1]["batch"] == 3);
  CHECK(doc["batches"][0]["samples_ns"].size() >= 10);
  CHECK(doc["fingerprint"].contains("git_commit"));
  CHECK(doc["environment"].contains("warnings"));
}

TEST_CASE("prism bench --qps: the server scenario and its SLO line") {
  TempDir dir;
  const RunResult r = run_prism(
      "bench mlp --qps 100,400 --max-batch 4 --max-wait-ms 1 --duration 0.2 --slo-ms 50 --no-peak",
      dir.path());
  REQUIRE(r.exited);
  CHECK_MESSAGE(r.code == 0, r.err);
  CHECK(contains(r.out, "offered/s"));
  CHECK(contains(r.out, "batch sizes formed"));
  CHECK(contains(r.out, "SLO p99 <= 50 ms"));
}

TEST_CASE("prism compare and prism gate on two bench results: exit codes 0, 1 and 2") {
  TempDir dir;
  REQUIRE(
      run_prism(std::string("bench mlp --batch 2 ") + kQuick + " --json a.json", dir.path()).code ==
      0);
  REQUIRE(run_prism(
              std::string("bench mlp --batch 2 ") + kQuick + " --kernel matmul=naive --json b.json",
              dir.path())
              .code == 0);
  const RunResult c = run_prism("compare a.json b.json", dir.path());
  CHECK_MESSAGE(c.code == 0, c.err);
  for (const char* s : {"decision:", "quality:", "matmul", "- -> naive",
                        "change: kernels defaults -> matmul=naive"}) {
    CHECK_MESSAGE(contains(c.out, s), s);
  }
  // The same file against itself passes; exact counters agree.
  const RunResult same = run_prism("gate a.json a.json --exact flops,allocs", dir.path());
  CHECK_MESSAGE(same.code == 0, std::string(same.out + same.err));
  CHECK(contains(same.out, "gate: passed"));
  // The naive matmul is many times slower at batch 2: a threshold breaks.
  const RunResult slow = run_prism("gate a.json b.json", dir.path());
  CHECK_MESSAGE(slow.code == 1, std::string(slow.out + slow.err));
  CHECK(contains(slow.out, "FAIL"));
  // Bad input: exit 2 with a message naming the problem.
  const RunResult missing = run_prism("gate a.json nosuch.json", dir.path());
  CHECK(missing.code == 2);
  CHECK(contains(missing.err, "nosuch.json"));
  const RunResult bad_exact = run_prism("gate a.json a.json --exact flop", dir.path());
  CHECK(bad_exact.code == 2);
  CHECK(contains(bad_exact.err, "unknown counter"));
  const RunResult bad_pct = run_prism("gate a.json a.json --max-p99-increase lots", dir.path());
  CHECK(bad_pct.code == 2);
}

TEST_CASE("prism compare MODEL runs both sides interleaved and decides") {
  TempDir dir;
  const RunResult r = run_prism(
      "compare mlp --b \"--kernel matmul=naive\" --batch 4 --rounds 2 --duration 0.1 --no-peak",
      dir.path());
  REQUIRE(r.exited);
  CHECK_MESSAGE(r.code == 0, r.err);
  CHECK(contains(r.out, "2 interleaved rounds"));
  CHECK(contains(r.out, "decision: worse"));
  CHECK(contains(r.out, "held"));
  const RunResult bad = run_prism("compare mlp --b \"--nosuch 1\"", dir.path());
  CHECK(bad.code == 2);
  CHECK(contains(bad.err, "--b"));
}

TEST_CASE("prism bench: bad input exits 2 before any work") {
  TempDir dir;
  CHECK(run_prism("bench nosuchmodel --no-peak", dir.path()).code == 2);
  CHECK(run_prism("bench mlp --batch 0", dir.path()).code == 2);
  CHECK(run_prism("bench mlp --mode sideways", dir.path()).code == 2);
  const RunResult train_qps = run_prism("bench mlp --mode train --qps 10 --no-peak", dir.path());
  CHECK(train_qps.code != 0);
  CHECK(contains(train_qps.err, "--mode infer"));
}

TEST_CASE("prism compare and gate read `prism train --json` results too") {
  TempDir dir;
  const std::string train = "train mlp --data spirals --steps 40 --batch 32 --profile-steps 5 ";
  REQUIRE(run_prism(train + "--json a.json", dir.path()).code == 0);
  REQUIRE(run_prism(train + "--json b.json", dir.path()).code == 0);
  const RunResult c = run_prism("compare a.json b.json", dir.path());
  CHECK_MESSAGE(c.code == 0, c.err);
  CHECK(contains(c.out, "train step"));
  CHECK(contains(c.out, "held-out accuracy"));
  // Same seed, same kernels: the same work to the last FLOP and allocation, the same accuracy.
  const RunResult g = run_prism("gate a.json b.json --exact flops,allocs --verbose", dir.path());
  CHECK(contains(g.out, "ok   train step flops (exact)"));
  CHECK(contains(g.out, "ok   held-out accuracy"));
}

TEST_CASE("--checkpoint: refused with a clear message before any work where it cannot apply") {
  TempDir dir;
  struct Case {
    const char* args;
    const char* says;
  };
  for (const Case& c : {
           Case{"bench transformer --mode infer --checkpoint blocks", "is for --mode train"},
           Case{"bench mlp --mode train --checkpoint blocks", "needs a model made of blocks"},
           Case{"train transformer --checkpoint every-0 --steps 1", "accepted: blocks"},
           Case{"train cnn --checkpoint blocks --steps 1", "needs a model made of blocks"},
           Case{"compare transformer --mode infer --b \"--checkpoint blocks\"",
                "is for --mode train"},
           Case{"compare resnet18 --mode train --b \"--checkpoint sometimes\"", "accepted: blocks"},
       }) {
    CAPTURE(c.args);
    const RunResult r = run_prism(c.args, dir.path());
    REQUIRE(r.exited);
    CHECK(r.code == 2);
    CHECK(contains(r.err, c.says));
  }
}

TEST_CASE("prism bench --mode decode: time to first token, per-token latency, the step's ops") {
  TempDir dir;
  const RunResult r = run_prism(
      "bench transformer --mode decode --prompt-tokens 6 --tokens 5 --iters 2 --threads 1 "
      "--no-peak --json d.json",
      dir.path());
  REQUIRE(r.exited);
  CHECK_MESSAGE(r.code == 0, r.err);
  for (const char* s : {"time to first token (prefill of 6 tokens)", "per token (8 steps)",
                        "tokens/s", "KV cache: ", "bytes a step must read",
                        "bandwidth limit: "
                        "unknown",
                        "where a step goes", "linear_gelu"}) {
    CHECK_MESSAGE(contains(r.out, s), s);
  }
  const auto doc = nlohmann::json::parse(read_file(dir / "d.json"));
  CHECK(doc["kind"] == "prism.decode");
  CHECK(doc["token_ns"].size() == 8);
  CHECK(doc["ttft_ns"].size() == 2);
  CHECK(doc["cache_bytes"] == 2 * 4 * 11 * 128 * 4);
}

TEST_CASE("prism bench --mode decode: flags that cannot apply are refused by name, exit 2") {
  TempDir dir;
  for (const char* args :
       {"bench transformer --mode decode --batch 4", "bench mlp --mode decode",
        "bench transformer --mode decode --prompt-tokens 100 --tokens 100",
        "bench transformer --mode decode --qps 10", "bench transformer --mode decode --warmup 2",
        "bench transformer --mode train --tokens 4",
        "compare transformer --mode decode --a \"--threads 1\" --b \"--threads 1\""}) {
    const RunResult r = run_prism(args, dir.path());
    REQUIRE(r.exited);
    CHECK_MESSAGE(r.code == 2, args);
    CHECK_MESSAGE(!r.err.empty(), args);
  }
  const RunResult r = run_prism("bench transformer --mode decode --batch 4", dir.path());
  CHECK(contains(r.err, "--batch: not with --mode decode"));
  const RunResult ctx =
      run_prism("bench transformer --mode decode --prompt-tokens 100 --tokens 100", dir.path());
  CHECK(contains(ctx.err, "need a context of 200"));
}
