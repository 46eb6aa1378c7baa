// Text-table helpers shared by the profiler's human-readable reports (the op table, the module
// tree): units picked per column, aligned columns, and the meta footer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "profiler/session.h"

namespace prism::profiler::text {

struct Unit {
  const char* name;
  double scale;  // raw value / scale = shown value
};

// Largest unit in `units` (ordered big to small) that the column's maximum reaches.
template <size_t N>
Unit pick_unit(const Unit (&units)[N], int64_t max_value) {
  for (const Unit& u : units) {
    if (static_cast<double>(max_value) >= u.scale) return u;
  }
  return units[N - 1];
}

inline constexpr Unit kTimeUnits[] = {{"s", 1e9}, {"ms", 1e6}, {"us", 1e3}, {"ns", 1}};
inline constexpr Unit kFlopUnits[] = {
    {"TFLOP", 1e12}, {"GFLOP", 1e9}, {"MFLOP", 1e6}, {"kFLOP", 1e3}, {"FLOP", 1}};
// Decimal bytes, to match GB/s as bandwidths are quoted.
inline constexpr Unit kByteUnits[] = {{"GB", 1e9}, {"MB", 1e6}, {"kB", 1e3}, {"B", 1}};

std::string human_time(int64_t ns);
// A scaled amount; an exact zero prints as "-" so empty cells stand out from small ones.
std::string amount(int64_t v, Unit u, int decimals);
// Work per self nanosecond is directly giga-units per second.
std::string rate(int64_t work, int64_t self_ns);
double percent(int64_t part, int64_t whole);

struct Column {
  std::string header;
  bool left;  // text columns align left, numbers right
  std::vector<std::string> cells;
  size_t width = 0;
};

// Header, a rule, then the rows, each column padded to its widest cell.
std::string render(std::vector<Column>& cols);

// Version, threads, compiler, flags, clock, profiler overhead, and what FLOPs and bytes mean.
std::string footer(const Meta& m);

}  // namespace prism::profiler::text
