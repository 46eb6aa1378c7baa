// sh's quoting rules, the part a README uses: '...' is literal, "..." is literal but for \ before
// $ ` " \ and newline, a backslash outside quotes escapes the next character (a backslash-newline
// joins two lines), and # at the start of a word starts a comment. No expansion is done: the
// words are only read to find flags, and the shell that runs the command expands them.
#include "tests/docs/shell_words.h"

#include <stdexcept>

namespace prism::docs_check {

namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t';
}
bool is_op_char(char c) {
  return c == ';' || c == '&' || c == '|';
}

// From an opening quote at s[i], the index one past its closing quote.
size_t skip_quoted(const std::string& s, size_t i) {
  const char q = s[i];
  for (size_t k = i + 1; k < s.size(); ++k) {
    if (q == '"' && s[k] == '\\' && k + 1 < s.size()) {
      ++k;
      continue;
    }
    if (s[k] == q) return k + 1;
  }
  throw std::runtime_error(std::string("a ") + q + " quote is never closed");
}

bool only_blank(const std::string& s) {
  for (char c : s) {
    if (!is_blank(c) && c != '\n') return false;
  }
  return true;
}

}  // namespace

std::vector<BlockCommand> split_commands(const std::string& block) {
  std::vector<BlockCommand> out;
  std::string cur;
  int line = 0, start = 0;
  bool word_start = true;  // the next character would begin a word (so # begins a comment)
  auto finish = [&] {
    if (!only_blank(cur)) out.push_back({start, cur.substr(0, cur.find_last_not_of(" \t") + 1)});
    cur.clear();
  };
  for (size_t i = 0; i < block.size();) {
    const char c = block[i];
    if (cur.empty() || only_blank(cur)) start = line;
    if (c == '\n') {
      finish();
      ++line, ++i;
      word_start = true;
    } else if (c == '\\' && i + 1 < block.size()) {
      if (block[i + 1] == '\n') ++line;
      cur += block.substr(i, 2);
      i += 2;
      word_start = false;
    } else if (c == '\'' || c == '"') {
      const size_t end = skip_quoted(block, i);
      for (size_t k = i; k < end; ++k) line += block[k] == '\n';
      cur += block.substr(i, end - i);
      i = end;
      word_start = false;
    } else if (c == '#' && word_start) {
      while (i < block.size() && block[i] != '\n') ++i;  // the comment is not part of the command
    } else {
      cur += c;
      word_start = is_blank(c) || is_op_char(c);
      ++i;
    }
  }
  finish();
  return out;
}

std::vector<Word> split_words(const std::string& command) {
  std::vector<Word> out;
  Word w;
  bool in_word = false;
  auto end_word = [&] {
    if (in_word) out.push_back(w);
    w = Word{};
    in_word = false;
  };
  for (size_t i = 0; i < command.size();) {
    const char c = command[i];
    if (is_blank(c) || c == '\n') {
      end_word();
      ++i;
    } else if (c == '\\' && i + 1 < command.size()) {
      if (command[i + 1] == '\n') {  // a continued line: a word boundary, nothing more
        end_word();
      } else {
        w.raw += command.substr(i, 2);
        w.value += command[i + 1];
        in_word = true;
      }
      i += 2;
    } else if (c == '\'' || c == '"') {
      const size_t end = skip_quoted(command, i);
      w.raw += command.substr(i, end - i);
      for (size_t k = i + 1; k + 1 < end; ++k) {
        if (c == '"' && command[k] == '\\' &&
            std::string("$`\"\\\n").find(command[k + 1]) != std::string::npos) {
          ++k;
        }
        w.value += command[k];
      }
      in_word = true;
      i = end;
    } else if (c == '#' && !in_word) {
      while (i < command.size() && command[i] != '\n') ++i;
    } else if (is_op_char(c)) {
      end_word();
      std::string op(1, c);
      if (c != ';' && i + 1 < command.size() && command[i + 1] == c) op += c;  // && ||
      out.push_back({op, op, true});
      i += op.size();
    } else {
      w.raw += c;
      w.value += c;
      in_word = true;
      ++i;
    }
  }
  end_word();
  return out;
}

std::string join_words(const std::vector<Word>& words) {
  std::string s;
  for (const Word& w : words) {
    if (!s.empty() && !(w.op && w.raw == ";")) s += ' ';
    s += w.raw;
  }
  return s;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace prism::docs_check
