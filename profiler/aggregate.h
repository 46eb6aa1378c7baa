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
  // GPU ops: device time summed over the calls that have it (CUDA events); -1 when none does.
  int64_t gpu_ns = -1;
  Cost cost;  // summed over calls
  int64_t allocs = 0;
  int64_t alloc_bytes = 0;
  // The fewest and most CPU threads a call's kernel ran on: 1 and 1 for a serial kernel, 1 and 2
  // for one that goes parallel only on its larger calls (kernels/cpu/parallel.h).
  int32_t threads_min = 0;
  int32_t threads_max = 0;
  // Event counts (counters.h), self like self_ns (nested ops' counts subtracted), summed over
  // the `counted_calls` calls that were counted (those of the session's thread).
  CounterValues counters;
  int64_t counted_calls = 0;
};

// Rows for Kind::op records, sorted by self time, largest first.
std::vector<OpRow> aggregate_ops(const Profile& p);

// Total self time of all op records: the time spent inside ops.
int64_t total_op_self_ns(const Profile& p);

// Self time of every record, in record order (0 for scope records).
std::vector<int64_t> record_self_times(const Profile& p);

// Self event counts of every record, in record order: each op's counts minus those of the ops
// nested directly inside it (through scopes), as self time is computed. Empty for scopes and
// for records that were not counted.
std::vector<CounterValues> record_self_counters(const std::vector<OpRecord>& records);

// One node of the scope tree (a module, or a user scope such as "data"), with everything done
// in its subtree: its own ops and those of its children. Backward ops count for the module
// whose forward made them (the autograd engine runs them in that scope).
struct ScopeRow {
  std::string path;                // "model.fc1"; "" for ops outside every scope
  std::string name;                // last component ("fc1"), "(outside scopes)" for ""
  int depth = 0;                   // number of components; 0 for ""
  int64_t calls = 0;               // times the scope was entered (module calls)
  std::string output_shape;        // last noted output shape ("[1,256]"), "" if none
  // By phase (Phase's order): forward, backward, optimizer, recompute, communication.
  Cost cost[kNumPhases];
  int64_t self_ns[kNumPhases] = {};  // op self time by phase
  int64_t allocs = 0;
  int64_t alloc_bytes = 0;
  int64_t alloc_bytes_by_phase[kNumPhases] = {};  // forward: activations (and temporaries)
  int64_t time_ns() const {
    int64_t t = 0;
    for (int64_t ns : self_ns) t += ns;
    return t;
  }
};

// Every scope path seen, each parent before its children, siblings in first-seen order. The
// top-level rows (depth <= 1) partition the op time: their time_ns add up to
// total_op_self_ns().
std::vector<ScopeRow> aggregate_scopes(const Profile& p);

// One row of the collectives table: all spans of one (op, world size), in first-seen order.
// Bandwidths follow nccl-tests (collective.h): algbw = bytes / time over all calls together (a
// time-weighted mean of the calls' algbw), busbw = algbw * bus_bandwidth_factor(op, world_size).
struct CollectiveRow {
  std::string op;
  int32_t world_size = 1;
  int64_t calls = 0;
  int64_t bytes = 0;      // summed over calls
  int64_t total_ns = 0;   // in-flight time summed over calls
  int64_t median_ns = 0;  // the median call's in-flight time (mean of the middle two)
  double algbw_gbs = 0;   // GB/s (1e9 bytes); 0 when total_ns is 0
  double busbw_gbs = 0;
};

std::vector<CollectiveRow> aggregate_collectives(const Profile& p);

}  // namespace prism::profiler
