// Small formatting helpers for the analysis reports (bench, compare, gate): aligned columns
// over the profiler's renderer, and times and sizes in human units.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace prism::analysis {

// A text table: the first column aligned left, the others right (numbers), every column as
// wide as its widest cell, a rule under the header.
class TextColumns {
 public:
  explicit TextColumns(std::vector<std::string> headers);
  void add(std::vector<std::string> cells);  // one cell per header
  // The table, each line prefixed with `indent`.
  std::string str(const std::string& indent = "") const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// "812 ns", "1.23 us", "45.6 ms", "2.01 s": three significant digits.
std::string format_ns(double ns);
// "512 B", "1.5 kB", "233.0 MB" (decimal units, as bandwidths are quoted); "-" when < 0.
std::string format_bytes(int64_t bytes);

}  // namespace prism::analysis
