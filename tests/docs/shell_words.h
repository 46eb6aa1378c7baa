// A documented shell command split the way sh splits it, far enough to rewrite its flags: the
// commands of a ```sh block, then each command's words and the operators between them. Words
// keep their quotes as written (`raw`), so a rewritten command means what the doc's meant: a
// quoted "$?" is still expanded by the shell that runs it.
#pragma once

#include <string>
#include <vector>

namespace prism::docs_check {

// One command of a block: an unquoted newline ends it unless a backslash continues the line.
struct BlockCommand {
  int line = 0;      // its first line, counted from 0 within the block
  std::string text;  // as written, continuation lines included; comment-only lines dropped
};
// Throws std::runtime_error for a quote left open at the end of the block.
std::vector<BlockCommand> split_commands(const std::string& block);

struct Word {
  std::string raw;    // as written: "--kernel matmul=blocked" with its quotes
  std::string value;  // what the program receives: --kernel matmul=blocked
  bool op = false;    // an operator between commands: ; && || | &
};
// The words of one command; a `#` comment is dropped. Throws std::runtime_error for an open quote.
std::vector<Word> split_words(const std::string& command);
// The words back as one command line.
std::string join_words(const std::vector<Word>& words);
// s as one shell word: '...' with each ' written '\''.
std::string shell_quote(const std::string& s);

}  // namespace prism::docs_check
