// How many threads an Eigen GEMM may use.
//
// Eigen, built with OpenMP, splits every matrix product over omp_get_max_threads() threads.
// For a small product the fork and join cost more than the split saves, and when the machine
// is busy (a shared 2-core box) a product waits for a thread the OS has descheduled: we
// measured a tiny transformer's training step at 43 ms with 1 thread and 414 ms with 2.
// So a product gets the threads only when it has enough work to pay for them.
#pragma once

#include <cstdint>

#include <omp.h>

#include <Eigen/Core>

#include "kernels/cpu/parallel.h"

namespace prism::kernels::cpu {

// About 0.1 ms of single-threaded GEMM work on a core doing 80 GFLOP/s: a fork/join costs a few
// microseconds on an idle machine, so below this the extra thread cannot earn its keep.
inline constexpr int64_t kParallelGemmMacs = int64_t{4} << 20;

// Sets Eigen's thread count for a product of `macs` multiply-adds: 1 below the threshold, else
// the OpenMP default (0 tells Eigen to ask OpenMP). The profiler's threads column gets the most
// Eigen may use (its own heuristics may take fewer for a thin product); inside a parallel region
// Eigen runs on the calling thread alone.
inline void eigen_threads_for(int64_t macs) {
  const bool split = macs >= kParallelGemmMacs;
  Eigen::setNbThreads(split ? 0 : 1);
  note_threads(split && !omp_in_parallel() ? omp_get_max_threads() : 1);
}

}  // namespace prism::kernels::cpu
