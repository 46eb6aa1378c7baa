// libFuzzer target: the `prism` command line (cli/parse.h), parsed without running anything.
// The input is split at NUL and newline bytes into arguments (at most 64) after argv[0] =
// "prism" (a separator at the end adds no empty argument). parse_command_line must choose a
// command, or report the outcome parsing decides (--help, a usage error: exit_code >= 0 with a
// message), or throw prism::cli::UsageError; the validators CLI11 runs (->check) and the
// commands' own rules across flags (Action::check) are part of what is fuzzed. Anything else
// (another exception, a sanitizer report, a leak) is a finding. The commands register from the
// prism_cli library this target links; none is run.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/parse.h"
#include "tests/fuzz/fuzz_file.h"

namespace prism::fuzz {

// True when the command line chose a command to run.
inline bool cli_input(const uint8_t* data, size_t size) {
  constexpr const char* kTarget = "fuzz_cli";
  constexpr size_t kMaxArgs = 64;
  std::vector<std::string> args = {"prism"};
  std::string arg;
  for (size_t i = 0; i < size && args.size() <= kMaxArgs; ++i) {
    if (data[i] == '\0' || data[i] == '\n') {
      args.push_back(arg);
      arg.clear();
    } else {
      arg.push_back(static_cast<char>(data[i]));
    }
  }
  if (!arg.empty() && args.size() <= kMaxArgs) args.push_back(arg);  // no separator at the end
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);

  try {
    const cli::CommandLine cl = cli::parse_command_line(static_cast<int>(args.size()), argv.data());
    if (cl.exit_code >= 0) {
      if (cl.action.run) finding(kTarget, "an exit code and a command");
      if (cl.exit_code != 0 && cl.exit_code != 2) finding(kTarget, "an exit code other than 0, 2");
      if (cl.out.empty() && cl.err.empty()) finding(kTarget, "an exit code without a message");
      return false;
    }
    if (!cl.action.run) finding(kTarget, "neither an exit code nor a command");
    return true;
  } catch (const cli::UsageError&) {
    // Expected: a leftover argument no command claimed.
  }
  return false;
}

}  // namespace prism::fuzz

#ifndef PRISM_FUZZ_NO_MAIN
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  prism::fuzz::cli_input(data, size);
  return 0;
}
#endif
