// Expected output as a README quotes it, against the output of a run. Numbers differ from run to
// run and machine to machine; the words, column headers and row labels around them must not.
// So each expected line becomes a pattern for a whole output line (both trimmed):
//   ...             anything (also a line of its own: no check)
//   12, 0.5, 1e-05  any number; a digit run right after a letter stays literal (p50, conv1, x1)
//   ms, MFLOP, kB   a unit matches the same unit with any prefix (the unit scales with the value)
//   spaces          one or more spaces (column widths follow the numbers)
// and a line is found when some output line matches it, in any order: tables sorted by time
// list their rows in another order on another machine.
#pragma once

#include <string>
#include <vector>

namespace prism::docs_check {

// The regex (ECMAScript) for one expected line; "" for a line that checks nothing.
std::string line_pattern(const std::string& expected);

// The output split into lines at \n and \r (progress lines rewrite themselves with \r).
std::vector<std::string> output_lines(const std::string& text);

struct Missing {
  size_t index = 0;  // in the expected lines
  std::string line, pattern;
};
// The expected lines (up to the first that starts with `until`, when given) no output line
// matches. Throws std::runtime_error for a pattern std::regex refuses.
std::vector<Missing> missing_lines(const std::vector<std::string>& expected,
                                   const std::string& until,
                                   const std::vector<std::string>& output);

std::string trim(const std::string& s);

}  // namespace prism::docs_check
