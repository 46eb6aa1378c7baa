// The cost of one op call, computed from shapes alone before the kernel runs.
//
// Conventions (docs/COSTS.md has the per-op table):
//   - one multiply-add is 2 FLOPs and 1 MAC; MACs sit beside FLOPs so numbers can be compared
//     with tools that count MACs (fvcore, ptflops);
//   - an elementwise op costs (arithmetic steps per element) x (output elements);
//   - bytes is the minimum traffic: every input element read once, every output written once.
//     A kernel that moves more than this (re-reading a tile, spilling) shows a lower GB/s.
#pragma once

#include <cstdint>
#include <iosfwd>

namespace prism::profiler {

// a + b, or the int64 limit it would pass (either sign).
inline int64_t saturating_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? INT64_MAX : INT64_MIN;
}

struct Cost {
  int64_t flops = 0;
  int64_t macs = 0;
  int64_t bytes = 0;

  // Totals saturate at 2^63 - 1 rather than wrap: each op's count is checked when it is made
  // (kernels/costs.h), but the sum over a long profile, or over a hostile JSON file's rows, can
  // still pass the limit, and a wrapped sum is undefined behaviour printed as a negative count.
  Cost& operator+=(const Cost& o) {
    flops = saturating_add(flops, o.flops);
    macs = saturating_add(macs, o.macs);
    bytes = saturating_add(bytes, o.bytes);
    return *this;
  }
  friend bool operator==(const Cost&, const Cost&) = default;
};

// "{flops 8, macs 4, bytes 48}": what a failed test's CHECK(a == b) prints (profiler/cost.cpp).
std::ostream& operator<<(std::ostream& os, const Cost& c);

}  // namespace prism::profiler
