// The `prism` command line (CLI11): the top-level app (--version, the help, errors as exit
// codes) and one subcommand per registered command (command.h), whose own file declares its
// options. Parsed into a CommandLine without running anything (see parse.h); main.cpp runs the
// chosen command; tests/fuzz/fuzz_cli.cpp fuzzes this parse.
#include "cli/parse.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

namespace prism::cli {

namespace {

constexpr int kExitUsage = 2;

// One registered command in this parse: its subcommand and what it runs.
struct Added {
  const CommandSpec* spec;
  CLI::App* app;
  Action action;
  const Added* parent;  // nullptr for a top-level command
};

// Whether one of `a`'s own subcommands was given (then `a` is only its prefix).
bool child_parsed(const Added& a, const std::vector<Added>& added) {
  return std::any_of(added.begin(), added.end(),
                     [&](const Added& b) { return b.parent == &a && b.app->parsed(); });
}

// "prism" or "prism demo": where to point the user for --help.
std::string command_path(const CLI::App& app) {
  std::string path = "prism";
  for (const CLI::App* sub : app.get_subcommands()) path += " " + sub->get_name();
  return path;
}

// An argument that no command or option claimed: name it and list the commands, sorted.
std::string unexpected_message(const std::string& arg, const std::vector<CommandSpec>& commands) {
  if (!arg.empty() && arg[0] == '-') return fmt::format("unknown option '{}'", arg);
  std::vector<std::string> names;
  for (const CommandSpec& c : commands) {
    if (c.parent == nullptr) names.emplace_back(c.name);
  }
  std::sort(names.begin(), names.end());
  return fmt::format("unknown command '{}' (commands: {})", arg, fmt::join(names, ", "));
}

}  // namespace

CommandLine parse_command_line(int argc, const char* const* argv) {
  CommandLine result;
  CLI::App app{"prism: a from-scratch ML framework with a profiler in its core", "prism"};
  bool show_version = false;
  app.add_flag("--version", show_version, "print the version and how this binary was built");

  // Each command's subcommand, in help order (a parent before its subcommands). `added` is
  // reserved first, so the pointers its entries keep to their parents stay valid.
  const std::vector<CommandSpec> commands = registered_commands();
  std::vector<Added> added;
  added.reserve(commands.size());
  for (const CommandSpec& spec : commands) {
    const Added* parent = nullptr;
    if (spec.parent != nullptr) {
      for (const Added& a : added) {
        if (a.parent == nullptr && std::strcmp(a.spec->name, spec.parent) == 0) parent = &a;
      }
      if (parent == nullptr) {
        throw std::logic_error(fmt::format(
            "command '{}': its parent '{}' is not registered before it", spec.name, spec.parent));
      }
    }
    CLI::App* cmd = (parent ? parent->app : &app)->add_subcommand(spec.name, spec.help);
    added.push_back({&spec, cmd, spec.setup(*cmd), parent});
  }
  // Leftover arguments at the top level get our own message (see unexpected_message); set after
  // the subcommands exist so they keep rejecting unknown flags themselves.
  app.allow_extras();

  try {
    app.parse(argc, argv);
    // Rules across flags (Action::check), for each command given that is not only the prefix of
    // one of its subcommands (`bench collectives` is not `bench MODEL`).
    for (const Added& a : added) {
      if (a.app->parsed() && a.action.check && !child_parsed(a, added)) a.action.check();
    }
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {  // --help: the help on stdout, exit 0
      std::ostringstream out, err;
      result.exit_code = app.exit(e, out, err);
      result.out = out.str();
      result.err = err.str();
      return result;
    }
    result.exit_code = kExitUsage;
    result.err =
        fmt::format("prism: error: {}\nRun '{} --help' for usage.\n", e.what(), command_path(app));
    return result;
  }
  if (!app.remaining().empty()) {
    throw UsageError(unexpected_message(app.remaining().front(), commands));
  }

  if (show_version) {
    result.command = "--version";
    result.action.run = [] {
      std::fputs(version_text().c_str(), stdout);
      return 0;
    };
    return result;
  }
  // CLI11 lets several commands be given (`prism ops demo`): the first in help order runs, a
  // subcommand before its parent.
  for (Added& a : added) {
    if (!a.app->parsed() || child_parsed(a, added)) continue;
    result.command =
        a.parent ? fmt::format("{} {}", a.parent->spec->name, a.spec->name) : a.spec->name;
    result.runs_kernels = a.spec->runs_kernels;
    result.action = std::move(a.action);
    return result;
  }
  result.exit_code = kExitUsage;
  result.err = app.help() + "\nprism: no command given (try `prism demo`)\n";
  return result;
}

}  // namespace prism::cli
