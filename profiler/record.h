// One row of the profile: everything known about a single op call.
//
// The record is a plain fixed-size struct so that opening one costs a vector slot and two clock
// reads, with no heap allocation on the hot path: op, variant and grad labels are string
// literals owned by the registry (never freed), shapes are copied into a small inline array, and
// the scope path is an index into an interned table.
#pragma once

#include <cstdint>
#include <string>

#include "profiler/cost.h"
#include "profiler/counters.h"

namespace prism::profiler {

// recompute: a forward op run again during backward to rebuild activations that activation
// checkpointing did not keep (its FLOPs and time are the price of the memory saved).
// communication: work done to exchange data between ranks (data-parallel gradient sync: packing
// buckets, waiting on a collective); the collectives' own in-flight time is recorded apart, as
// CollectiveSpans (collective.h), because it overlaps other ops.
enum class Phase : uint8_t { forward, backward, optimizer, recompute, communication };
constexpr int kNumPhases = 5;
const char* phase_name(Phase p);

// Up to kMaxShapes input shapes of up to kMaxDims dims each; longer lists are truncated and
// flagged (the op still runs and is timed, only the shape column is shortened).
struct ShapeList {
  static constexpr int kMaxShapes = 4;
  static constexpr int kMaxDims = 6;
  int64_t dims[kMaxShapes][kMaxDims];
  uint8_t ndim[kMaxShapes];
  uint8_t count = 0;
  bool truncated = false;

  void add(const int64_t* d, int n);
  std::string to_string() const;  // "[2,3] [3,4]"
};

enum class Kind : uint8_t { op, scope };

struct OpRecord {
  Kind kind = Kind::op;      // an op call, or a named scope (PRISM_SCOPE, a module call)
  const char* op = "";       // the op that ran, e.g. "matmul"
  const char* variant = "";  // kernel variant, e.g. "naive"; "" for ops without a kernel
  const char* grad_of = "";  // in backward: which gradient this computes, e.g. "matmul.dA"
  const char* device = "cpu";
  Phase phase = Phase::forward;
  int32_t scope = 0;    // interned scope path id, 0 = top level
  int32_t parent = -1;  // index of the enclosing record, -1 if none
  int32_t depth = 0;    // nesting depth (0 = outermost)
  int32_t tid = 0;      // small thread number, 0 = the first thread that recorded; a thread
                        // that exited leaves its number to the next new thread
  int64_t start_ns = 0;
  int64_t dur_ns = 0;  // host time: for a GPU op, queueing the work, not doing it
  // GPU ops: the time the device spent between the op's two CUDA events, and when it started
  // on the session clock (aligned at the session's first GPU op); -1 for host-only records.
  int64_t gpu_start_ns = -1;
  int64_t gpu_ns = -1;
  int32_t gpu_slot = -1;  // the GPU timer slot, until the session resolves it
  Cost cost;
  int64_t allocs = 0;  // storage allocations made while the op was open
  int64_t alloc_bytes = 0;
  // CPU threads the op's kernel ran on (kernels/cpu/parallel.h tells; 1 for a serial kernel and
  // for ops without a CPU kernel). The largest count when the op ran several parallel loops.
  int32_t threads = 1;
  ShapeList shapes;
  // Event counts of the call, children included (like dur_ns), when the session counts them
  // (counters.h): only for op records of the thread that started a counting session; mask 0
  // otherwise.
  CounterValues counters;
};

}  // namespace prism::profiler
