// The expected line is scanned once, left to right, into a regex: "..." first, then spaces,
// numbers, runs of letters (a unit or a word), and any other character escaped.
#include "tests/docs/expect_match.h"

#include <regex>
#include <stdexcept>

namespace prism::docs_check {

namespace {

bool is_letter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_space(char c) {
  return c == ' ' || c == '\t';
}

// A decimal number, signed, with an optional fraction and exponent: 12, -0.5, 1.2e+05, .5
const char* kNumber = R"([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)";

// The unit a run of letters names, as a pattern for any prefix of it; "" when it is no unit.
std::string unit_pattern(const std::string& w) {
  static const std::regex time_re("^(ns|us|ms|s)$");
  static const std::regex flop_re("^[kMGTP]?FLOP(/s)?$");
  static const std::regex byte_re("^[kKMGT]?i?B(/s)?$");
  std::smatch m;
  if (std::regex_match(w, time_re)) return "(?:ns|us|ms|s)";
  if (std::regex_match(w, m, flop_re))
    return "[kMGTP]?FLOP" + std::string(m[1].matched ? "/s" : "");
  if (std::regex_match(w, m, byte_re)) return "[kKMGT]?i?B" + std::string(m[1].matched ? "/s" : "");
  return "";
}

std::string escape(char c) {
  static const std::string special = R"(\^$.|?*+()[]{})";
  return special.find(c) == std::string::npos ? std::string(1, c) : "\\" + std::string(1, c);
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::string line_pattern(const std::string& expected) {
  const std::string s = trim(expected);
  if (s.empty() || s == "...") return "";
  std::string re;
  size_t i = 0;
  // A number starts here: a digit (or a sign or point before one) not glued to a word before it.
  auto number_at = [&](size_t k) {
    const bool glued = k > 0 && (is_letter(s[k - 1]) || is_digit(s[k - 1]) || s[k - 1] == '_');
    if (glued) return false;
    if (is_digit(s[k])) return true;
    const bool sign_or_point = s[k] == '-' || s[k] == '+' || s[k] == '.';
    return sign_or_point && k + 1 < s.size() && is_digit(s[k + 1]);
  };
  while (i < s.size()) {
    if (s.compare(i, 3, "...") == 0) {
      re += ".*";
      i += 3;
    } else if (is_space(s[i])) {
      while (i < s.size() && is_space(s[i])) ++i;
      // Next to "..." the spaces are optional: the elided text may end the line or be empty.
      re += ends_with(re, ".*") || s.compare(i, 3, "...") == 0 ? "\\s*" : "\\s+";
    } else if (number_at(i)) {
      if (s[i] == '-' || s[i] == '+') ++i;
      while (i < s.size() && (is_digit(s[i]) || s[i] == '.')) ++i;
      if (i + 1 < s.size() && (s[i] == 'e' || s[i] == 'E') &&
          (is_digit(s[i + 1]) ||
           ((s[i + 1] == '-' || s[i + 1] == '+') && i + 2 < s.size() && is_digit(s[i + 2])))) {
        i += 2;
        while (i < s.size() && is_digit(s[i])) ++i;
      }
      re += kNumber;
    } else if (is_letter(s[i])) {
      const size_t b = i;
      while (i < s.size() && (is_letter(s[i]) || s[i] == '/')) ++i;
      const std::string word = s.substr(b, i - b);
      const std::string unit = unit_pattern(word);
      if (!unit.empty()) {
        re += unit;
      } else {
        for (char c : word) re += escape(c);
      }
    } else {
      re += escape(s[i++]);
    }
  }
  return re;
}

std::vector<std::string> output_lines(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == '\n' || c == '\r') {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(trim(cur));
  return out;
}

std::vector<Missing> missing_lines(const std::vector<std::string>& expected,
                                   const std::string& until,
                                   const std::vector<std::string>& output) {
  std::vector<Missing> missing;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (!until.empty() && trim(expected[i]).rfind(until, 0) == 0) break;
    const std::string pattern = line_pattern(expected[i]);
    if (pattern.empty()) continue;
    std::regex re;
    try {
      re = std::regex(pattern);
    } catch (const std::regex_error& e) {
      throw std::runtime_error("cannot make a pattern of '" + expected[i] + "': " + e.what());
    }
    bool found = false;
    for (const std::string& o : output) {
      if (std::regex_match(o, re)) {
        found = true;
        break;
      }
    }
    if (!found) missing.push_back({i, expected[i], pattern});
  }
  return missing;
}

}  // namespace prism::docs_check
