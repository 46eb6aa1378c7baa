// The `prism` command line, parsed without running anything: the command chosen and what it
// runs, or the outcome that parsing alone decides (--help, a usage error, no command). The
// commands and their options are those registered (command.h); main.cpp runs the chosen one,
// and tests/fuzz/fuzz_cli.cpp feeds arbitrary argument vectors through parse_command_line.
#pragma once

#include <string>

#include "cli/command.h"
#include "cli/commands.h"

namespace prism::cli {

struct CommandLine {
  // >= 0: parsing alone decided the outcome (--help: 0, the help in `out`; a bad flag or value:
  // 2, the message in `err`; no command given: 2, the help and a hint in `err`). The caller
  // prints `out` on stdout, `err` on stderr and exits with this code. -1: run `action`.
  int exit_code = -1;
  std::string out;
  std::string err;

  // The command chosen ("train", "bench collectives"; "--version" for the flag), "" when none.
  std::string command;
  bool runs_kernels = false;  // its CommandSpec's
  Action action;              // with a `run` exactly when exit_code is -1
};

// Parses argv (argv[0] is the program name) with a CLI11 app of every registered command, its
// options and their validators. Throws UsageError for a leftover argument no command claimed
// ("unknown command 'x'"); never runs a command and never reads the environment.
CommandLine parse_command_line(int argc, const char* const* argv);

}  // namespace prism::cli
