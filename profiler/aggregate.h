// Aggregation of a profile's records into the rows the reports print.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "profiler/session.h"

namespace prism::profiler {

// One row of the op table: all calls of one (op, phase, variant, grad_of, device).
struct OpRow {
  std::string name;
  Phase phase = Phase::forward;
  std::string variant;
  std::string grad_of;  // backward rows: the gradient computed, e.g. "matmul.dA"
  std::string device;
  int64_t calls = 0;
  int64_t total_ns = 0;  // inclusive time
  int64_t self_ns = 0;   // minus the time of op records nested inside
  Cost cost;             // summed over calls
  int64_t allocs = 0;
  int64_t alloc_bytes = 0;
};

// Rows for Kind::op records, sorted by self time, largest first.
std::vector<OpRow> aggregate_ops(const Profile& p);

// Total self time of all op records: the time spent inside ops.
int64_t total_op_self_ns(const Profile& p);

}  // namespace prism::profiler
