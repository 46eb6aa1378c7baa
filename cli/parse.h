// The `prism` command line, parsed without running anything: which command was chosen and its
// options, or the outcome that parsing alone decides (--help, a usage error, no command). CLI11
// is only seen by parse.cpp; main.cpp runs the chosen command, and tests/fuzz/fuzz_cli.cpp
// feeds arbitrary argument vectors through parse_command_line.
#pragma once

#include <string>

#include "cli/commands.h"

namespace prism::cli {

enum class Command {
  none,
  version,
  ops,
  demo,
  train,
  summary,
  machine,
  lab,
  bench,
  bench_collectives,
  compare,
  models,
  sweep,
  report,
  gate,
  check,
  course,
  quantize,
  generate
};

struct CommandLine {
  // >= 0: parsing alone decided the outcome (--help: 0, the help in `out`; a bad flag or value:
  // 2, the message in `err`; no command given: 2, the help and a hint in `err`). The caller
  // prints `out` on stdout, `err` on stderr and exits with this code. -1: run `command`.
  int exit_code = -1;
  std::string out;
  std::string err;

  Command command = Command::none;
  DemoOptions demo;
  TrainOptions train;
  SummaryOptions summary;
  MachineOptions machine;
  LabCliOptions lab;
  BenchCliOptions bench;
  CollectivesCliOptions collectives;
  CompareOptions compare;
  ModelsOptions models;
  SweepOptions sweep;
  ReportOptions report;
  GateCliOptions gate;
  CheckOptions check;
  CourseOptions course;
  QuantizeOptions quantize;
  GenerateOptions generate;
};

// Parses argv (argv[0] is the program name) with the CLI11 app that defines every command, its
// options and their validators. Throws UsageError for a leftover argument no command claimed
// ("unknown command 'x'"); never runs a command and never reads the environment.
CommandLine parse_command_line(int argc, const char* const* argv);

}  // namespace prism::cli
