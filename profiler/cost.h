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

namespace prism::profiler {

struct Cost {
  int64_t flops = 0;
  int64_t macs = 0;
  int64_t bytes = 0;

  Cost& operator+=(const Cost& o) {
    flops += o.flops;
    macs += o.macs;
    bytes += o.bytes;
    return *this;
  }
  friend bool operator==(const Cost&, const Cost&) = default;
};

}  // namespace prism::profiler
