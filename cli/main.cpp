// The `prism` command: runs the command that parse_command_line (parse.h: the CLI11 app, every
// command's options) chose, and maps every failure to a message and an exit code (see
// commands.h). Nothing escapes main() as a crash.
//
//   prism --version            how this binary was built
//   prism ops                  the kernel registry: ops, variants, cost formulas
//   prism demo [options]       train the CNN briefly under the profiler
//   prism train MODEL [...]    train a zoo model on a data set
//   prism summary MODEL        per-module shapes, params and costs (meta device)
//   prism machine [options]    this machine's peak FLOP/s and memory bandwidth (cached)
//   prism lab OP [...]         validate and time every kernel variant of an op
//   prism bench MODEL [...]    latency, throughput and memory per batch size; a server scenario
//   prism bench collectives    (under mpirun) allreduce time per message size, alpha-beta fit
//   prism compare A B | MODEL  baseline against candidate, with statistics and a decision
//   prism models A B ...       architectures side by side: costs, speed, where the time goes
//   prism sweep MODEL --vary   how time and memory grow with one size; a fitted power law
//   prism report IN.json ...   profiles as one self-contained HTML page (-o report.html)
//   prism gate BASE CAND       a regression gate for CI (or --baselines DIR: the self-gate)
//   prism check NAME           build and run an exercise's checker on the learner's file
//   prism course               the modules, the exercises, the learner's progress, what is next
//   prism quantize M.safetensors  int8 post-training quantization: sizes and accuracy, fp32 vs int8
//   prism generate M.safetensors  text from a character transformer; KV-cache latency and memory
//
// `prism` with no command prints the help on stderr and exits 2 (no command was given: a usage
// error, so scripts notice); `prism --help` prints it on stdout and exits 0.
#include <cstdio>
#include <exception>

#include "cli/commands.h"
#include "cli/file_roles.h"
#include "cli/parse.h"

namespace {

using prism::cli::Command;
using prism::cli::UsageError;

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;

int run(int argc, char** argv) {
  const prism::cli::CommandLine cl = prism::cli::parse_command_line(argc, argv);
  if (cl.exit_code >= 0) {  // --help, a parse error or no command: nothing to run
    std::fputs(cl.out.c_str(), stdout);
    std::fputs(cl.err.c_str(), stderr);
    return cl.exit_code;
  }

  // No output may be one of the command's inputs or another of its outputs (file_roles.h).
  prism::cli::check_file_roles(prism::cli::files_of(cl));

  // PRISM_THREADS applies to every command (it is what --version reports); --threads wins.
  if (const int n = prism::cli::threads_from_env(); n > 0) prism::cli::set_threads(n);
  // The commands that run kernels split them by this machine's region cost, when measured.
  switch (cl.command) {
    case Command::demo:
    case Command::train:
    case Command::lab:
    case Command::bench:
    case Command::bench_collectives:
    case Command::compare:
    case Command::models:
    case Command::sweep:
    case Command::quantize:
    case Command::generate:
      prism::cli::install_split_rule();
      break;
    default:
      break;
  }

  switch (cl.command) {
    case Command::version:
      std::fputs(prism::cli::version_text().c_str(), stdout);
      return 0;
    case Command::ops:
      return prism::cli::run_ops();
    case Command::demo:
      return prism::cli::run_demo(cl.demo);
    case Command::train:
      return prism::cli::run_train(cl.train);
    case Command::summary:
      return prism::cli::run_summary(cl.summary);
    case Command::machine:
      return prism::cli::run_machine(cl.machine);
    case Command::lab:
      return prism::cli::run_lab(cl.lab);
    case Command::bench:
      return prism::cli::run_bench(cl.bench);
    case Command::bench_collectives:
      return prism::cli::run_collectives(cl.collectives);
    case Command::compare:
      return prism::cli::run_compare(cl.compare);
    case Command::models:
      return prism::cli::run_models(cl.models);
    case Command::sweep:
      return prism::cli::run_sweep(cl.sweep);
    case Command::report:
      return prism::cli::run_report(cl.report);
    case Command::gate:
      return prism::cli::run_gate(cl.gate);
    case Command::check:
      return prism::cli::run_check(cl.check);
    case Command::course:
      return prism::cli::run_course(cl.course);
    case Command::quantize:
      return prism::cli::run_quantize(cl.quantize);
    case Command::generate:
      return prism::cli::run_generate(cl.generate);
    case Command::none:
      break;
  }
  return kExitUsage;  // parse_command_line sets exit_code when no command was given
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "prism: error: %s\nRun 'prism --help' for usage.\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "prism: error: %s\n", e.what());
    return kExitError;
  } catch (...) {
    std::fprintf(stderr, "prism: error: unknown failure\n");
    return kExitError;
  }
}
