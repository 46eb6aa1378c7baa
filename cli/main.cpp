// The `prism` command: runs the command that parse_command_line (parse.h) chose, and maps every
// failure to a message and an exit code (see commands.h). Nothing escapes main() as a crash.
// `prism --help` lists the commands; each is one file, cmd_<name>.cpp, that registers itself
// (command.h). exercises/ links this same main with a learner's kernel: prism_with_NAME.
//
// `prism` with no command prints the help on stderr and exits 2 (no command was given: a usage
// error, so scripts notice); `prism --help` prints it on stdout and exits 0.
#include <cstdio>
#include <exception>

#include "cli/commands.h"
#include "cli/file_roles.h"
#include "cli/parse.h"

namespace {

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
  if (cl.runs_kernels) prism::cli::install_split_rule();
  return cl.action.run();
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
