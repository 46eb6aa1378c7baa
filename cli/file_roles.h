// The files a command line reads and writes, and the one rule they obey: no output may be one of
// the command's inputs, or another of its outputs. `prism report X.json -o X.json` would turn the
// profile into a page, `prism train --load W --save W --json W` the weights into a profile; each
// is a usage error (exit 2) before any work instead.
//
// "The same file" is judged as the file system does, not by the name: an existing file is the
// same as another when both resolve (symbolic links followed) to one device and inode, so
// `./B`, `dir/../B`, a symbolic link to B and a hard link to B are all B; a file that does not
// exist yet is the same as another when their absolute paths, the links of the part that exists
// resolved, are equal. Streams are never "the same": a name under /dev or /proc/self/fd
// (`--json /dev/stdout`, even when stdout is redirected to a file, `/dev/null`), a device or a
// FIFO; two outputs may both go to /dev/null. An input that does not exist is skipped: it cannot
// be destroyed, and its command reports it missing.
//
// Each command lists its own files (Action::files in its cmd_<name>.cpp, see command.h);
// files_of adds what every command that writes reads too. tests/cli/same_file_test.cpp runs every
// command with a file flag, with each output named as each input and as each other output,
// several ways: a new command with file flags joins its table.
#pragma once

#include <string>
#include <vector>

#include "cli/parse.h"

namespace prism::cli {

// One file argument: the flag that named it ("--json", "--trace's report.html", or a positional
// argument's name from the help: "BASE", "IN.json") and the path as given.
struct FileArg {
  std::string flag;
  std::string path;
};

struct CommandFiles {
  std::vector<FileArg> inputs;   // read: checkpoints, result files, a corpus, data-set files
  std::vector<FileArg> outputs;  // written

  // Lists `path` under `flag`; an unset (empty) one is not listed.
  void input(const std::string& flag, const std::string& path);
  void output(const std::string& flag, const std::string& path);
  // The files `--data SPEC` reads: nothing for a generated set (shapes, spirals, the built-in
  // text), the four files of an MNIST-format directory (Fashion-MNIST's, when it is the set or,
  // with `default_is_mnist`, SPEC is "" and the command's default), or else the text file SPEC.
  void data_set(const std::string& spec, bool default_is_mnist);
};

// The files the parsed command `cl` would read and write: its own (Action::files), and the
// machine cache when it writes any.
CommandFiles files_of(const CommandLine& cl);

// Throws UsageError naming both flags when an output is one of the inputs or another output
// (see the top of this file).
void check_file_roles(const CommandFiles& files);

// `prism train --trace T` with no --report writes its page beside the trace: this path; "" when
// T is a device or a FIFO (no page is written then).
std::string report_beside_trace(const std::string& trace_path);

}  // namespace prism::cli
