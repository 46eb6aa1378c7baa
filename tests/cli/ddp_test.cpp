// `prism train --ddp` as a user runs it: under `mpirun -np 2`, against one process at the same
// global batch, and every way a data-parallel run can go wrong (no launcher, ranks that differ,
// a rank that dies or hangs, weights that drift apart). Small models on the spirals set: each
// run takes about a second.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <vector>

#include "tests/cli/cli_run.h"

using namespace prism::cli_test;

namespace {

const char* kRun = "train mlp --data spirals --steps 30 --batch 64 --seed 3";

size_t count(const std::string& s, const std::string& part) {
  size_t n = 0;
  for (size_t at = s.find(part); at != std::string::npos; at = s.find(part, at + 1)) ++n;
  return n;
}

std::vector<double> losses(const fs::path& json) {
  return nlohmann::json::parse(read_file(json))["train"]["step_losses"].get<std::vector<double>>();
}

}  // namespace

TEST_CASE("train --ddp, 2 ranks: the loss curve of one process at the same global batch") {
  TempDir dir;
  const RunResult one =
      run_prism(std::string(kRun) + " --threads 1 --json one.json --profile-steps 5", dir.path());
  REQUIRE_MESSAGE(one.code == 0, one.err);
  const RunResult two =
      run_mpi(2, std::string(kRun) + " --ddp --json two.json --profile-steps 5 --trace trace.json",
              dir.path());
  REQUIRE(two.exited);
  REQUIRE_MESSAGE(two.code == 0, two.out, two.err);
  // Rank 0 alone prints.
  CHECK(count(two.out, "step 30/30") == 1);
  CHECK(count(two.out, "data parallel: 2 ranks, 32 examples each per step") == 1);
  CHECK(count(two.out, "test: accuracy") == 1);
  // The same examples each step, averaged gradients: the same curve up to float rounding (the
  // mean over 64 examples is summed in two halves).
  const std::vector<double> a = losses(dir / "one.json"), b = losses(dir / "two.json");
  REQUIRE(a.size() == 30);
  REQUIRE(b.size() == 30);
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]) / a[i]);
  CHECK_MESSAGE(worst < 1e-4, "largest relative difference ", worst);
  CHECK(a.front() == doctest::Approx(b.front()).epsilon(1e-6));  // same initial weights
  const auto j = nlohmann::json::parse(read_file(dir / "two.json"));
  CHECK(j["train"]["ddp"]["ranks"] == 2);
  CHECK(j["train"]["ddp"]["gradient_bytes"] == 4 * j["train"]["ddp"]["parameters"].get<int>());
  // The profile: communication rows and the collectives table.
  bool allreduce = false;
  for (const auto& op : j["ops"]) allreduce = allreduce || op["name"] == "allreduce";
  CHECK(allreduce);
  CHECK(j["collectives"].size() >= 1);
  // One trace, a process row per rank.
  const auto trace = nlohmann::json::parse(read_file(dir / "trace.json"));
  bool rank0 = false, rank1 = false;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("ph", "") == "M" && e.value("name", "") == "process_name") {
      const std::string n = e["args"]["name"];
      rank0 = rank0 || n.find("rank 0") != std::string::npos;
      rank1 = rank1 || n.find("rank 1") != std::string::npos;
    }
  }
  CHECK(rank0);
  CHECK(rank1);
}

TEST_CASE("train --ddp: overlap off and one bucket give the overlapped run's losses exactly") {
  // With 2 ranks every element of an allreduce is one addition, a + b = b + a, whichever
  // algorithm or bucket carries it: the runs must agree bit for bit.
  TempDir dir;
  const RunResult base = run_mpi(2, std::string(kRun) + " --ddp --json a.json", dir.path());
  REQUIRE_MESSAGE(base.code == 0, base.err);
  const RunResult off =
      run_mpi(2, std::string(kRun) + " --ddp --no-overlap --bucket-mb 0 --json b.json", dir.path());
  REQUIRE_MESSAGE(off.code == 0, off.err);
  CHECK(contains(off.out, "one gradient bucket for all gradients, allreduce after backward"));
  CHECK(losses(dir / "a.json") == losses(dir / "b.json"));
  const RunResult small =
      run_mpi(2, std::string(kRun) + " --ddp --bucket-mb 0.001 --json c.json", dir.path());
  REQUIRE_MESSAGE(small.code == 0, small.err);
  CHECK(contains(small.out, "6 gradient buckets"));
  CHECK(losses(dir / "a.json") == losses(dir / "c.json"));
}

TEST_CASE("train --ddp without an MPI launcher: a usage error before any work") {
  TempDir dir;
  const RunResult r = run_prism(std::string(kRun) + " --ddp", dir.path());
  CHECK(r.code == 2);
  CHECK(contains(r.err, "--ddp needs an MPI launcher"));
  CHECK(contains(r.err, "mpirun -np 2"));
  CHECK_FALSE(contains(r.out, "step "));
}

TEST_CASE("train --ddp: a global batch that does not split into equal shards is refused") {
  TempDir dir;
  const RunResult r = run_mpi(2, "train mlp --data spirals --steps 5 --batch 63 --ddp", dir.path());
  CHECK(r.code != 0);
  CHECK(contains(r.err, "the global batch 63 does not split into 2 equal shards"));
}

TEST_CASE("train --ddp: ranks that run different commands stop at the start, naming the field") {
  TempDir dir;
  const RunResult r = run_shell(
      std::string(kMpirun) +
          " -np 1 {prism} train mlp --data spirals --steps 5 --batch 64 --ddp : -np 1 {prism} "
          "train mlp --data spirals --steps 5 --batch 32 --ddp",
      dir.path());
  CHECK(r.code != 0);
  CHECK(contains(r.err, "run a different configuration than rank 0"));
  CHECK(contains(r.err, "global batch: 64"));
  CHECK_FALSE(contains(r.out, "step 1/5"));
}

TEST_CASE("train --ddp: a rank that dies stops the others with an error") {
  TempDir dir;
  const RunResult r =
      run_mpi(2, std::string(kRun) + " --ddp", dir.path(), "PRISM_DDP_FAULT=1:3:exit");
  REQUIRE(r.exited);  // not killed by the test's timeout: no hang
  CHECK(r.code != 0);
  CHECK(r.code != 124);
  CHECK(contains(r.err, "rank 1: PRISM_DDP_FAULT: leaving at step 3"));
  CHECK_FALSE(contains(r.out, "step 30/30"));
}

TEST_CASE("train --ddp: a rank that hangs stops the others after --ddp-timeout") {
  TempDir dir;
  // A fractional timeout, as given (it once read "within 1 s").
  const RunResult r = run_mpi(2, std::string(kRun) + " --ddp --ddp-timeout 1.5", dir.path(),
                              "PRISM_DDP_FAULT=1:3:hang");
  REQUIRE(r.exited);
  CHECK(r.code != 0);
  CHECK(r.code != 124);
  CHECK(contains(r.err, "no answer from the other ranks within 1.5 s"));
}

TEST_CASE("train --ddp: the ranks wait for rank 0's evaluation and reports past --ddp-timeout") {
  // Rank 0 evaluates the transformer and samples text from it (seconds) while the other rank
  // waits at the trace gather and at MPI's finalize: a wait for work, not for a dead rank, so
  // --ddp-timeout must not stop the job there (it once did, after the whole run).
  TempDir dir;
  const RunResult r = run_mpi(2,
                              "train transformer --data text --steps 2 --batch 8 --ddp "
                              "--ddp-timeout 1 --trace t.json",
                              dir.path());
  REQUIRE(r.exited);
  CHECK_MESSAGE(r.code == 0, r.err);
  CHECK_FALSE(contains(r.err, "no answer"));
  CHECK(contains(r.out, "validation: loss"));
  CHECK(fs::exists(dir / "t.json"));
}

TEST_CASE("bench collectives with one rank says that its allreduce moves nothing") {
  TempDir dir;
  const RunResult r =
      run_mpi(1, "bench collectives --sizes 4,4096 --reps 2 --warmup 0", dir.path());
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(contains(r.out, "one rank: an allreduce moves no data"));
}

TEST_CASE("train --ddp: weights that drift apart are caught by the checksum") {
  TempDir dir;
  const RunResult r = run_mpi(2, std::string(kRun) + " --ddp --check-every 5", dir.path(),
                              "PRISM_DDP_FAULT=1:3:perturb");
  CHECK(r.code != 0);
  CHECK(contains(r.err, "after step 5 the weights of rank(s) 1 differ from rank 0's"));
}
