// Monotonic nanosecond clock used for every time the profiler reports.
//
// std::chrono::steady_clock on Linux reads CLOCK_MONOTONIC through the vDSO: about 20 ns per
// call, no system call, never jumps backwards. Its resolution is reported in every profile's
// meta block so a reader can judge how much a 50 ns op row means.
#pragma once

#include <chrono>
#include <cstdint>

namespace prism::profiler {

inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace prism::profiler
