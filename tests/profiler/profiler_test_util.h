// Small helpers shared by the profiler tests.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "profiler/clock.h"
#include "profiler/recorder.h"

namespace prism::profiler::testing {

// Spins (rather than sleeps) so the time is spent on this thread and is never shorter than
// asked: tests compare durations and need them clearly above the clock's resolution.
inline void busy_wait_ns(int64_t ns) {
  const int64_t t0 = now_ns();
  while (now_ns() - t0 < ns) {
  }
}

inline ShapeList shapes_of(std::initializer_list<std::vector<int64_t>> shapes) {
  ShapeList s;
  for (const auto& d : shapes) s.add(d.data(), static_cast<int>(d.size()));
  return s;
}

// Opens an op record with the given cost and no shapes; close it with close_op.
inline int32_t open_plain(const char* op, const char* variant = "naive", Cost cost = {}) {
  return open_op(op, variant, "cpu", cost, ShapeList{});
}

// The records of `rec` named `op`, in record order.
inline std::vector<const OpRecord*> records_named(const Recording& rec, std::string_view op) {
  std::vector<const OpRecord*> out;
  for (const OpRecord& r : rec.records) {
    if (op == r.op) out.push_back(&r);
  }
  return out;
}

}  // namespace prism::profiler::testing
