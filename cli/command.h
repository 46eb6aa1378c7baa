// The `prism` commands register themselves, as kernels, OpInfos and report views do: each
// cmd_<name>.cpp holds its options, the function that declares them on its CLI11 subcommand, its
// run function and one registration (a static RegisteredCommand), so adding a command or a flag
// touches that file only. parse.cpp builds the command line from this list; main.cpp runs what
// the parse chose.
//
// This header does not include CLI11 (the files that share it with the commands, such as
// train_run.h's, need none of it); a command's file includes <CLI/CLI.hpp> itself.
#pragma once

#include <functional>
#include <vector>

namespace CLI {
class App;
}

namespace prism::cli {

struct CommandFiles;  // file_roles.h

// What one command does once the command line is parsed. The setup function creates the
// command's options (a shared_ptr the closures keep), binds them to its flags and returns this:
// the options outlive the CLI11 app, which parse_command_line destroys before anything runs.
// Every member has an initializer, so a command leaves out what it lacks (`return {.run = ...}`)
// without -Wextra's missing-initializer warning.
struct Action {
  // Runs the command; its exit code (0 ok, 1 a run-time error; failures may also throw, see
  // commands.h).
  std::function<int()> run = nullptr;
  // Adds the files the command reads and writes (file_roles.h: no output may be an input or
  // another output); empty for a command without file arguments.
  std::function<void(CommandFiles&)> files = nullptr;
  // Rules across flags that CLI11 cannot state, run right after the parse while the app exists,
  // when this command was given (and none of its own subcommands): throws a CLI::ParseError,
  // reported as a usage error like CLI11's own. Empty for most commands.
  std::function<void()> check = nullptr;
};

struct CommandSpec {
  // Where the command comes in `prism --help` (in its parent's list for a subcommand), smallest
  // first; unique. A number, not the order of static initialisation, which is the order the
  // files happen to be linked in: a new command takes a free number between its neighbours'. A
  // subcommand's number must be larger than its parent's (the parent's app is made first).
  int order = 0;
  const char* name = "";
  const char* help = "";  // the line `prism --help` shows
  // nullptr: a top-level command; else the top-level command this one is a subcommand of
  // ("bench" for `prism bench collectives`).
  const char* parent = nullptr;
  // The command runs kernels: main installs this machine's split rule first (threads.cpp).
  bool runs_kernels = false;
  // Declares the command's positional arguments, options and validators on `cmd` (the
  // subcommand, already named and described) and returns what to run once they are parsed.
  Action (*setup)(CLI::App& cmd) = nullptr;
};

// Registers a command: a static object in its cmd_<name>.cpp. A duplicate name or order is a
// programming error, reported on stderr before main() runs, and the program stops.
struct RegisteredCommand {
  explicit RegisteredCommand(const CommandSpec& spec);
};

// Every registered command, by `order`.
std::vector<CommandSpec> registered_commands();

}  // namespace prism::cli
