// Collective spans: the in-flight interval of a collective (allreduce, allgather, ...) between
// ranks of a data-parallel run.
//
// A non-blocking collective runs while the rank goes on with other ops (backward overlaps the
// gradient allreduce), so its interval is not nested in the op tree like an OpRecord: it is
// recorded apart, once it is known to be complete, from the time it was started to the time its
// completion was seen. Reports show each span on a "communication" track of the trace and fold
// them into a collectives table with the NCCL-tests bandwidth figures:
//
//   algbw = S / t                                       (S: bytes, t: in-flight time)
//   busbw = algbw * bus_bandwidth_factor(op, n)         (n: world size)
//
// busbw is what the link carried for the slowest rank of a ring-style implementation, so it is
// comparable to a link's peak whatever n is, and across collectives.
#pragma once

#include <cstdint>

#include "profiler/cost.h"

namespace prism::profiler {

struct CollectiveSpan {
  const char* op;    // "allreduce", a string literal (never freed): the name reports print
  int64_t start_ns;  // on profiler::now_ns()'s clock
  int64_t end_ns;
  int64_t bytes;       // S, as nccl-tests counts it (record_collective)
  int32_t world_size;  // n, the ranks taking part
  int32_t tid;         // the recorder's number for the thread that recorded it
};

// Records a collective that was in flight from start_ns to end_ns (profiler::now_ns() clock),
// moving `bytes` bytes per rank, among world_size ranks. `bytes` is S of nccl-tests: the buffer
// of an allreduce, broadcast or reduce; the gathered output of an allgather (n chunks); the
// input of a reducescatter (n chunks). `op` must outlive the process (a string literal).
// No-op when not recording(); any thread may call it (each records into its own buffer). Throws
// std::invalid_argument for end_ns < start_ns, bytes < 0, world_size < 1 or a null/empty op.
void record_collective(const char* op, int64_t start_ns, int64_t end_ns, int64_t bytes,
                       int world_size);

// busbw / algbw for collective `op` among n ranks (nccl-tests, PERFORMANCE.md):
//   allreduce                        2 (n - 1) / n
//   reducescatter, allgather, alltoall   (n - 1) / n
//   broadcast, reduce, sendrecv, and any other op   1
// Throws std::invalid_argument for n < 1.
double bus_bandwidth_factor(const char* op, int n);

// The cost row of an allreduce (sum) of numel elements among `ranks` processes, per rank (the
// `allreduce` op of a data-parallel step, docs/COSTS.md): FLOPs = numel (ranks - 1) / ranks, the
// additions a ring makes on each rank (ranks - 1 of its ranks chunks added into its own); bytes =
// numel x elem size, the message, as NCCL-tests count an allreduce's size S (the bytes on each
// rank's wire are bus_bandwidth_factor times that). Throws std::invalid_argument for ranks < 1.
Cost allreduce_cost(int64_t numel, int ranks, int64_t elem_size);

}  // namespace prism::profiler
