// `prism bench collectives`: the time of one blocking allreduce (sum, float32, in place) across
// message sizes, on every rank of the MPI job, as NCCL-tests and the OSU benchmarks measure it:
// warm up, then R timed repetitions, each started together behind a barrier.
//
// Per size: the median and its 95% bootstrap interval over the repetitions
// (profiler/statistics.h), the algorithm bandwidth algbw = bytes / time (what the caller sees)
// and the bus bandwidth busbw = algbw * 2 (n - 1) / n (what each rank's links carried:
// profiler::bus_bandwidth_factor, the profiler's collectives table uses the same). The alpha-beta
// fit of the medians is fit_alpha_beta's (nn/dist/alpha_beta.h).
//
// The allreduce timed is Comm::allreduce_sum: the non-blocking MPI_Iallreduce waited for by
// polling, exactly what DDP's buckets pay (nn/dist/comm.h), not a bare MPI_Allreduce.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nn/dist/alpha_beta.h"
#include "profiler/statistics.h"

namespace prism::dist {

class Comm;

struct CollectivesOptions {
  std::vector<int64_t> sizes;  // message sizes in bytes, multiples of 4; empty: the defaults
  int reps = 20;               // timed repetitions per size
  int warmup = 3;              // untimed repetitions per size before them
};

// Powers of 4 from 4 B to 64 MiB: 4, 16, 64, ..., 16 MiB, 64 MiB (13 sizes).
std::vector<int64_t> default_message_sizes();

// A size as the command line writes it: bytes ("4096"), or with a binary suffix K, M or G
// ("64K" = 65536, "1M", also "KiB"/"MiB"/"GiB"). A prism::Error names a value that is not one,
// is not a multiple of 4 (float32 elements), or is outside 4 B .. kMaxMessageBytes.
int64_t parse_message_size(const std::string& text);
inline constexpr int64_t kMaxMessageBytes = int64_t{1} << 30;  // 1 GiB: each rank holds one

// The options checked (sizes, none twice; reps >= 1, warmup >= 0), before any MPI call; a
// prism::Error names the bad one.
void check_collectives_options(const CollectivesOptions& o);

struct SizeResult {
  int64_t bytes = 0;
  std::vector<double> seconds;       // per repetition, the slowest rank's time (see the .cpp)
  profiler::stats::Summary summary;  // of `seconds`: median, 95% interval, ...
  double algbw_gbs = 0;              // bytes / median, in GB/s (10^9 B/s)
  double busbw_gbs = 0;              // algbw * profiler::bus_bandwidth_factor(allreduce, ranks)
};

struct CollectivesResult {
  int ranks = 0;
  int reps = 0, warmup = 0;
  std::vector<SizeResult> sizes;
  AlphaBetaFit fit;  // of the medians; fit.n == 0 when there was one size only
};

// Runs on every rank of `comm` (a collective call: every rank must call it with the same
// options); every rank returns the same result.
CollectivesResult measure_allreduce(Comm& comm, const CollectivesOptions& o);

}  // namespace prism::dist
