// The split rule: how much work each thread must bring before a CPU kernel splits a call, scaled
// by what a parallel region costs on the machine that runs it.
//
// The grain sizes of kernels/cpu/parallel.h (a chunk is half of a measured crossover) and the
// matmul thresholds were measured on one machine, where a region (fork, barrier, join) costs
// kReferenceRegionMicros at 2 threads. Splitting W microseconds of work over t threads pays when
//   W / t + R(t) < W,   that is   W > R(t) t / (t - 1),
// so the work a split needs grows in proportion to the region cost R(t): on a machine whose
// regions cost 4 times as much, a call needs 4 times the work, at any chunk size. The chunks stay
// as they are, the cut of [0, n) depends on n alone, so the bits of every result do not depend
// on the rule (parallel.h); only whether, and over how many threads, a call splits does.
//
//   work_scale(t) = max(1, ceil(R(t) / kReferenceRegionMicros))
//
// is the number of chunks each of t threads must get (parallel.h's threads_for) and the factor
// on the matmul thresholds (kernels/ops/matmul/optimized.cpp, eigen_threads.h,
// kernels/ops/linear_gelu/fused.cpp). R(t) is what `prism machine` measured and cached (region_us,
// median, team awake, as a training step's ops come back to back); the CLI installs it when a
// command starts (cli/threads.cpp: install_split_rule). Where nothing is installed, and on a
// machine whose regions cost no more than the reference's, the scale is 1: the rule the chunk sizes
// were measured for. A cheaper region does not lower it: the chunks would have to shrink, and with
// them the order of every chunked sum.
//
// The rule assumes a chunk takes about as long as on the reference core; a core much faster per
// chunk would want a larger scale still (docs/PERFORMANCE.md "Threads" has both machines).
#pragma once

#include <cstdint>
#include <vector>

namespace prism::kernels::cpu {

// The region cost at 2 threads where the chunk sizes were measured (bench/parallel_grain.cpp on
// the 2-vCPU Xeon of docs/PERFORMANCE.md, median).
inline constexpr double kReferenceRegionMicros = 0.85;

// Thread counts the rule keeps a cost for; more threads use the last one's.
inline constexpr int kSplitRuleMaxThreads = 256;

// Installs measured region costs: micros[t - 2] is R(t) for t = 2, 3, ...; a zero or negative
// entry (not measured) leaves that count at the reference. An empty vector restores the
// reference rule everywhere. Thread-safe, but meant to be called once, before kernels run: a
// kernel running meanwhile may see either rule.
void set_region_costs(const std::vector<double>& micros);

// R(t) as installed, else kReferenceRegionMicros (also for t < 2, where no region is opened).
double region_cost_micros(int threads);

// Chunks (or multiples of a matmul threshold) each of `threads` threads must bring: see above.
int64_t work_scale(int threads);

// The scale a region cost of `micros` gives: max(1, ceil(micros / kReferenceRegionMicros)); 1
// for a cost that is not positive or not finite (unknown).
int64_t work_scale_for(double micros);

}  // namespace prism::kernels::cpu
