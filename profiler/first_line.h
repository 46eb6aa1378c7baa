// The first line of a small text file: a /proc or /sys entry, a progress file.
#pragma once

#include <fstream>
#include <string>

namespace prism::profiler {

// Without its newline; "" when the file cannot be read or is empty.
inline std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace prism::profiler
