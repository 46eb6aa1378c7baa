// Reads fenced code blocks (``` or ~~~, CommonMark's rule: the closing fence is the same
// character, at least as long) and the <!-- expect --> markers before them.
#include "tests/docs/doc_blocks.h"

#include <regex>
#include <sstream>
#include <stdexcept>

#include "tests/docs/shell_words.h"

namespace prism::docs_check {

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (!l.empty() && l.back() == '\r') l.pop_back();
    out.push_back(l);
  }
  return out;
}

struct Fence {
  std::string marker;  // ``` or ~~~~, as opened
  std::string info;    // the word after it: sh, text, cpp, ...
};

bool open_fence(const std::string& line, Fence& f) {
  static const std::regex re(R"(^ {0,3}(`{3,}|~{3,})\s*([^`\s]*).*$)");
  std::smatch m;
  if (!std::regex_match(line, m, re)) return false;
  f = {m[1], m[2]};
  return true;
}

bool closes(const std::string& line, const Fence& f) {
  static const std::regex re(R"(^ {0,3}(`{3,}|~{3,})\s*$)");
  std::smatch m;
  return std::regex_match(line, m, re) && m.str(1)[0] == f.marker[0] &&
         m.str(1).size() >= f.marker.size();
}

std::string fmt_line(int line, const std::string& what) {
  return "line " + std::to_string(line) + ": " + what;
}

bool is_shell(const std::string& info) {
  return info == "sh" || info == "bash" || info == "shell";
}

}  // namespace

DocFile parse_doc(const std::string& markdown) {
  static const std::regex marker_re(R"(^\s*<!--\s*expect\b(.*?)-->\s*$)");
  static const std::regex attr_re(R"re(^\s*([a-z]+)="([^"]*)")re");
  DocFile doc;
  const std::vector<std::string> lines = lines_of(markdown);
  bool pending = false;  // a marker waits for its code block
  Expectation marker;
  for (size_t i = 0; i < lines.size(); ++i) {
    const int lineno = static_cast<int>(i) + 1;
    std::smatch m;
    if (std::regex_match(lines[i], m, marker_re)) {
      if (pending)
        doc.errors.push_back(fmt_line(marker.line, "expect marker without a code block"));
      pending = true;
      marker = Expectation{};
      marker.line = lineno;
      std::string attrs = m[1];
      std::string cmd;
      for (std::smatch a; std::regex_search(attrs, a, attr_re); attrs = a.suffix()) {
        if (a[1] == "cmd") {
          cmd = a[2];
        } else if (a[1] == "until") {
          marker.until = a[2];
        } else {
          doc.errors.push_back(fmt_line(lineno, "unknown expect attribute '" + a.str(1) + "'"));
        }
      }
      if (attrs.find_first_not_of(" \t") != std::string::npos) {
        doc.errors.push_back(fmt_line(lineno, "cannot read the expect marker: '" + m.str(1) + "'"));
      }
      if (!cmd.empty()) doc.blocks.push_back({lineno, {{lineno, cmd}}, {}});
      continue;
    }
    Fence f;
    if (!open_fence(lines[i], f)) {
      if (pending && lines[i].find_first_not_of(" \t") != std::string::npos) {
        doc.errors.push_back(fmt_line(marker.line, "expect marker not followed by a code block"));
        pending = false;
      }
      continue;
    }
    std::vector<std::string> body;
    size_t j = i + 1;
    while (j < lines.size() && !closes(lines[j], f)) body.push_back(lines[j++]);
    if (pending) {
      marker.lines = body;
      marker.first_line = lineno + 1;
      if (doc.blocks.empty()) {
        doc.errors.push_back(fmt_line(marker.line, "expect marker with no command above it"));
      } else {
        doc.blocks.back().expectations.push_back(marker);
      }
      pending = false;
    } else if (is_shell(f.info)) {
      std::string text;
      for (const std::string& l : body) text += l + "\n";
      DocBlock block{lineno, {}, {}};
      try {
        for (const BlockCommand& c : split_commands(text)) {
          block.commands.push_back({lineno + 1 + c.line, c.text});
        }
      } catch (const std::exception& e) {
        doc.errors.push_back(fmt_line(lineno, e.what()));
      }
      doc.blocks.push_back(block);
    }
    i = j;  // past the closing fence (or the end, for a block never closed)
  }
  if (pending) doc.errors.push_back(fmt_line(marker.line, "expect marker without a code block"));
  return doc;
}

}  // namespace prism::docs_check
