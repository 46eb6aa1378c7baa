// How many threads an Eigen GEMM may use.
//
// Eigen, built with OpenMP, splits every matrix product over omp_get_max_threads() threads.
// For a small product the fork and join cost more than the split saves, and when the machine
// is busy (a shared 2-core box) a product waits for a thread the OS has descheduled: a tiny
// transformer's training step was measured an order of magnitude slower with 2 threads than with 1
// (docs/PERFORMANCE.md, "Training steps: prism vs PyTorch, side by side").
// So a product gets the threads only when it has enough work to pay for them.
#pragma once

#include <cstdint>

#include <omp.h>

#include <Eigen/Core>

#include "kernels/cpu/parallel.h"

namespace prism::kernels::cpu {

// Sets Eigen's thread count for a product of `macs` multiply-adds: 1 below kParallelGemmMacs
// (parallel.h, with the split rule's scale), else as many as threads_for_macs allows. The
// profiler's threads column gets that count (Eigen's own heuristics may take fewer for a thin
// product); inside a parallel region Eigen runs on the calling thread alone.
inline void eigen_threads_for(int64_t macs) {
  const int threads = threads_for_macs(macs, kParallelGemmMacs, kGemmMacsPerThread);
  Eigen::setNbThreads(threads);
  note_threads(threads);
}

}  // namespace prism::kernels::cpu
