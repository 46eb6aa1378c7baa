// The docs test's own pieces: reading a README's blocks and markers, making a command cheap or
// skipping it, and matching quoted output against a run's. A fault here would let a rotten doc
// pass (a pattern that matches anything) or fail a sound one, so each rule is pinned down.
#include <doctest/doctest.h>

#include <regex>

#include "tests/docs/cheap_rules.h"
#include "tests/docs/doc_blocks.h"
#include "tests/docs/expect_match.h"
#include "tests/docs/shell_words.h"

using namespace prism::docs_check;

namespace {

bool matches(const std::string& expected, const std::string& output) {
  return std::regex_match(output, std::regex(line_pattern(expected)));
}

Setup setup() {
  Setup s;
  s.bins["prism"] = "/b/prism";
  s.bins["prism_tests_tensor"] = "/b/prism_tests_tensor";
  s.source_dir = PRISM_SOURCE_DIR;
  return s;
}

}  // namespace

TEST_CASE("docs_check: numbers, units and spaces may differ, words and labels may not") {
  CHECK(matches("batch  calls  cold  p50  p99", "batch     calls    cold   p50   p99"));
  CHECK_FALSE(matches("batch  calls  cold  p50  p99", "batch  calls  cold  p50  p95"));
  CHECK_FALSE(matches("batch  calls  cold  p50", "batch  calls  p50"));  // a removed column
  CHECK(matches("1      12  35.3 us", "64     2275  1.2e+03 ms"));
  CHECK(matches("total ms  self ms  GFLOP  GFLOP/s  alloc MB",
                "total us  self us  MFLOP  MFLOP/s  alloc kB"));
  CHECK_FALSE(matches("GFLOP/s", "GB/s"));
  CHECK(matches("input [B,1,28,28] float32 (synthetic), 1 thread, ...",
                "input [B,3,224,224] float32 (synthetic), 1 thread, device cpu"));
  CHECK_FALSE(matches("float32", "float64"));  // digits glued to a word are literal
  CHECK_FALSE(matches("conv1     Conv2d", "conv2     Conv2d"));
  CHECK(matches(
      "decision: ... (B/A median time ...x, 95% interval [..., ...]; p = ...)",
      "decision: worse (B/A median time 1.284x, 95% interval [1.278, 1.287]; p = 6.8e-08)"));
  CHECK(matches("FLOPs same (4309072); allocations same (8)",
                "FLOPs same (17); allocations same (-3)"));
  CHECK(matches("batch sizes formed:  500/s: ...x1 ...x2 ...",
                "batch sizes formed:  500/s: 6x1 6x2 1x3"));
  CHECK(matches("data ...", "data"));
  CHECK(line_pattern("...").empty());
  CHECK(line_pattern("   ").empty());
}

TEST_CASE("docs_check: every expected line must appear, in any order, up to `until`") {
  const std::vector<std::string> out = output_lines("header a b\r\nrow x 1\nrow y 2\rwarnings:\n");
  CHECK(missing_lines({"row y 5", "row x 7", "header a b"}, "", out).empty());
  const auto miss = missing_lines({"header a c", "...", "row z 1"}, "", out);
  REQUIRE(miss.size() == 2);
  CHECK(miss[0].index == 0);
  CHECK(miss[1].index == 2);
  CHECK(missing_lines({"row x 1", "warnings:", "  other processes are busy: ..."}, "warnings", out)
            .empty());
}

TEST_CASE("docs_check: the commands of a block, with continuations, quotes and comments") {
  const auto cmds = split_commands(
      "# a comment, don't split\n"
      "build/prism lab matmul --sizes 64   # B's comment\n"
      "build/prism compare mlp --b \"--kernel matmul=blocked\" \\\n"
      "    --threads 1\n"
      "python3 -c \"import json\n"
      "print(1)\"\n");
  REQUIRE(cmds.size() == 3);
  CHECK(cmds[0].line == 1);
  CHECK(cmds[1].line == 2);
  CHECK(cmds[2].line == 4);
  const auto w = split_words(cmds[1].text);
  REQUIRE(w.size() == 7);
  CHECK(w[4].value == "--kernel matmul=blocked");
  CHECK(w[4].raw == "\"--kernel matmul=blocked\"");
  const auto g = split_words("build/prism gate a.json b.json; echo \"exit $?\"");
  REQUIRE(g.size() == 7);
  CHECK(g[4].op);
  CHECK(join_words(g) == "build/prism gate a.json b.json; echo \"exit $?\"");
  CHECK_THROWS(split_words("echo 'open"));
}

TEST_CASE("docs_check: expect markers bind a block to the commands above or to their cmd") {
  const DocFile d = parse_doc(
      "text\n"
      "```sh\n"
      "build/prism bench mlp\n"
      "```\n"
      "prose between\n"
      "<!-- expect until=\"warnings\" -->\n"
      "```\n"
      "batch  calls\n"
      "```\n"
      "<!-- expect cmd=\"build/prism demo\" -->\n"
      "\n"
      "~~~text\n"
      "op  phase\n"
      "~~~\n"
      "<!-- expect -->\n"
      "```\n"
      "module  type\n"
      "```\n"
      "```cpp\n"
      "not run\n"
      "```\n");
  CHECK(d.errors.empty());
  REQUIRE(d.blocks.size() == 2);
  CHECK(d.blocks[0].line == 2);
  REQUIRE(d.blocks[0].commands.size() == 1);
  CHECK(d.blocks[0].commands[0].line == 3);
  REQUIRE(d.blocks[0].expectations.size() == 1);
  CHECK(d.blocks[0].expectations[0].until == "warnings");
  CHECK(d.blocks[0].expectations[0].first_line == 8);
  CHECK(d.blocks[1].commands[0].text == "build/prism demo");
  REQUIRE(d.blocks[1].expectations.size() == 2);
  CHECK(d.blocks[1].expectations[1].lines == std::vector<std::string>{"module  type"});

  CHECK(parse_doc("<!-- expect -->\n```\nx\n```\n").errors.size() == 1);  // no command above
  CHECK(parse_doc("```sh\nls\n```\n<!-- expect -->\nprose\n").errors.size() == 1);
  CHECK(parse_doc("```sh\nls\n```\n<!-- expect wrong=\"x\" -->\n```\nx\n```\n").errors.size() == 1);
}

TEST_CASE("docs_check: the flag rules make a command cheap and say what they did") {
  const Setup s = setup();
  Plan p =
      plan_command("build/prism train mlp --steps 40 --threads 1 --profile --profile-steps 10", s);
  REQUIRE(p.run);
  CHECK(p.command == "'/b/prism' train mlp --steps 8 --threads 1 --profile --profile-steps 2");
  CHECK(p.changes.size() == 2);

  p = plan_command("build/prism train cnn --epochs 1 --threads 1", s);
  CHECK(p.command == "'/b/prism' train cnn --steps 8 --threads 1");
  p = plan_command("build/prism train cnn --profile --trace t.json", s);  // one epoch by default
  CHECK(p.command == "'/b/prism' train cnn --profile --trace t.json --steps 8");

  p = plan_command("build/prism lab matmul --sizes 1024,64,256x256x256:nt --reps 50", s);
  CHECK(p.command ==
        "'/b/prism' lab matmul --sizes 64 --reps 3 --min-sample-ms 2 --max-seconds 1 --no-peak");

  p = plan_command("time build/prism bench mlp --batch 64 --duration=2", s);
  CHECK(p.command == "'/b/prism' bench mlp --batch 64 --duration=0.05 --no-peak");
  p = plan_command("build/prism bench cnn --iters 2000 --no-peak", s);
  CHECK(p.command == "'/b/prism' bench cnn --iters 20 --no-peak");  // no --duration with --iters
  p = plan_command("build/prism bench cnn --qps 500,5000 --duration 2 --no-peak", s);
  CHECK(p.command == "'/b/prism' bench cnn --qps 500,5000 --duration 0.3 --no-peak");

  p = plan_command("build/prism compare base.json cand.json", s);
  CHECK(p.command == "'/b/prism' compare base.json cand.json");  // result files: nothing to time

  // models: shorter, fewer rounds, a smaller batch; never the machine's peak.
  p = plan_command("build/prism models mlp cnn transformer --match params --duration 0.3", s);
  CHECK(p.command ==
        "'/b/prism' models mlp cnn transformer --match params --duration 0.05 --no-peak "
        "--rounds 2 --batch 8");
  CHECK(p.changes.size() == 4);
  p = plan_command("build/prism models mlp cnn --batch 4 --rounds 1 --no-peak", s);
  CHECK(p.command == "'/b/prism' models mlp cnn --batch 4 --rounds 1 --no-peak --duration 0.05");
  // sweep: shorter points, one warm call; the varied values stay (they are the lesson).
  p = plan_command("build/prism sweep cnn --vary batch=1,2,256 --duration 2 --warmup 5", s);
  CHECK(p.command ==
        "'/b/prism' sweep cnn --vary batch=1,2,256 --duration 0.05 --warmup 1 --no-peak");
  p = plan_command("build/prism sweep mlp --vary threads=1,2 --batch 64", s);
  CHECK(p.command ==
        "'/b/prism' sweep mlp --vary threads=1,2 --batch 64 --no-peak --duration 0.05 --warmup 1");

  p = plan_command(
      "PRISM_KERNELS=matmul=naive build/prism gate --baselines bench/baselines; echo \"exit $?\"",
      s);
  CHECK(p.command == "PRISM_KERNELS=matmul=naive '/b/prism' gate --baselines '" +
                         std::string(PRISM_SOURCE_DIR) + "/bench/baselines'; echo \"exit $?\"");

  p = plan_command("build/prism_tests_tensor -tc=\"views: *\" --success | less", s);
  CHECK(p.command == "'/b/prism_tests_tensor' -tc=\"views: *\" --success");

  p = plan_command("build/prism summary mlp", s);
  CHECK(p.changes.empty());
}

TEST_CASE("docs_check: an MPI launcher's commands get the rules of the prism command it starts") {
  const Setup s = setup();
  // The launcher and its options stay; the launched command is made cheap; --oversubscribe lets
  // 2 ranks start on a 1-core machine.
  Plan p = plan_command("mpirun -np 2 build/prism train mlp --ddp --batch 128 --steps 300", s);
  REQUIRE(p.run);
  CHECK(p.command ==
        "mpirun --oversubscribe -np 2 '/b/prism' train mlp --ddp --batch 128 --steps 8");
  CHECK(p.changes == std::vector<std::string>{"added --oversubscribe", "--steps 300 -> 8"});
  p = plan_command("mpiexec --oversubscribe -n 2 build/prism train cnn --ddp", s);
  CHECK(p.command == "mpiexec --oversubscribe -n 2 '/b/prism' train cnn --ddp --steps 8");

  // A variable before the launcher, an operator after it.
  p = plan_command(
      "PRISM_DDP_FAULT=1:3:hang mpirun -np 2 build/prism train mlp --ddp --steps 30 "
      "--ddp-timeout 2; echo \"exit $?\"",
      s);
  CHECK(
      p.command ==
      "PRISM_DDP_FAULT=1:3:hang mpirun --oversubscribe -np 2 '/b/prism' train mlp --ddp --steps 8 "
      "--ddp-timeout 2; echo \"exit $?\"");

  // App contexts: each command after a `:` is rewritten too, its flags added before the `:`.
  p = plan_command(
      "mpirun -np 1 build/prism train mlp --ddp : -np 1 build/prism train mlp --ddp --lr 0.1", s);
  CHECK(
      p.command ==
      "mpirun --oversubscribe -np 1 '/b/prism' train mlp --ddp --steps 8 : -np 1 '/b/prism' train "
      "mlp --ddp --lr 0.1 --steps 8");

  // bench collectives: its own rules (fewer repetitions, a short --predict), none of bench MODEL's.
  p = plan_command("mpirun -np 2 build/prism bench collectives --predict mlp", s);
  CHECK(
      p.command ==
      "mpirun --oversubscribe -np 2 '/b/prism' bench collectives --predict mlp --reps 5 --warmup 1 "
      "--duration 0.05");
  p = plan_command("mpirun -np 2 build/prism bench collectives --reps 3", s);
  CHECK(p.command ==
        "mpirun --oversubscribe -np 2 '/b/prism' bench collectives --reps 3 --warmup 1 --duration "
        "0.05");

  // What the launcher starts decides: another program, or a prism command on the skip list.
  CHECK(plan_command("mpirun -np 2 hostname", s).skip_reason == "not a prism command");
  CHECK(plan_command("mpirun -np 2 build/prism train mlp --ddp : -np 1 hostname", s).skip_reason ==
        "not a prism command");
  CHECK_FALSE(plan_command("mpirun -np 2 build/prism check relu", s).run);
  CHECK_FALSE(plan_command("mpirun -np 2 build/prism train cnn --ddp --device cuda", s).run);
  CHECK(describe_rules().find("mpirun") != std::string::npos);
}

TEST_CASE("docs_check: what cannot run on a CI machine is skipped, with the reason") {
  const Setup s = setup();
  CHECK(plan_command("build/prism lab matmul --device cuda --sizes 1024", s)
            .skip_reason.find("GPU") != std::string::npos);
  CHECK_FALSE(plan_command("build/prism train cnn --device=cuda", s).run);
  CHECK_FALSE(plan_command("/usr/bin/python3 bench/compare_pytorch.py --prism build/prism", s).run);
  CHECK_FALSE(plan_command("ctest --test-dir build -R cuda:", s).run);
  CHECK_FALSE(plan_command("make demo", s).run);
  CHECK_FALSE(plan_command("nsys profile -o cnn build/prism train cnn", s).run);
  CHECK_FALSE(plan_command("build/prism check relu", s).run);
  CHECK(
      plan_command("build/prism_with_relu lab relu", s).skip_reason.find("not built by default") !=
      std::string::npos);
  CHECK(plan_command("ls -l", s).skip_reason == "not a prism command");
  CHECK(describe_rules().find("--device cuda") != std::string::npos);
}
