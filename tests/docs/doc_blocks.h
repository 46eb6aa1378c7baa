// What a README documents as runnable: the commands of its ```sh blocks and the output it quotes
// for them. The convention (tests/docs/README.md):
//
//   ```sh                                  every command of an sh (or bash, shell) block is run
//   build/prism bench mlp --duration 0.5
//   ```
//   <!-- expect -->                        the next code block is the output of the nearest
//   ```                                    commands above it (an sh block, or a cmd="..." marker)
//   batch  calls  cold  p50 ...
//   ```
//
// A marker may name its command when the doc names it only in prose,
// <!-- expect cmd="build/prism demo" -->, and may stop the check before lines that depend on
// the machine: <!-- expect until="warnings" --> checks the lines above the first one that
// starts with "warnings".
#pragma once

#include <string>
#include <vector>

namespace prism::docs_check {

struct DocCommand {
  int line = 0;      // 1-based line in the markdown file
  std::string text;  // as written (a continued command keeps its backslash-newlines)
};

struct Expectation {
  int line = 0;                    // the line of its <!-- expect --> marker
  int first_line = 0;              // the line of the code block's first line
  std::vector<std::string> lines;  // the code block's lines
  std::string until;               // stop before the first line that starts with this
};

// Commands that run together (one sh block, or one marker's cmd) and the output quoted for them.
struct DocBlock {
  int line = 0;
  std::vector<DocCommand> commands;
  std::vector<Expectation> expectations;
};

struct DocFile {
  std::vector<DocBlock> blocks;
  std::vector<std::string> errors;  // "line N: ..." for a marker or block the test cannot read
};

DocFile parse_doc(const std::string& markdown);

}  // namespace prism::docs_check
