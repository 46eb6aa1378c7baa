// The one place a CPU kernel splits its work over threads.
//
// Fixed chunks. A kernel hands over n items (elements, rows, images, planes) and a chunk size;
// [0, n) is cut into chunks of `chunk` items, the last one shorter, and the cut depends on n and
// `chunk` alone, never on the thread count. Each thread runs a contiguous run of whole chunks
// (chunk c goes to thread c * threads / chunks, a static split), and a reduction keeps one
// partial per chunk and adds the partials in chunk order. So every item is computed by the same
// code, next to the same neighbours, in the same order, at 1, 2 or 16 threads: outputs and
// gradients are bit-identical across runs AND across thread counts (tests/kernels/
// determinism_test.cpp checks it for every op class). At one thread the kernel runs the same
// chunks one after the other, so the serial path is not a second implementation.
//
// Grain. Entering an OpenMP parallel region and leaving it (fork, barrier, join) costs about
// kReferenceRegionMicros microseconds on the 2-core machine of docs/PERFORMANCE.md ("Threads
// (2026-11-25)"), and bench/parallel_grain.cpp measures it and, per op class, the crossover: the
// size from which 2 threads beat 1 at every larger size, timed interleaved. A kernel runs
// serially until it has at least two chunks, and each class's chunk is half its crossover, so
// two chunks exist from the crossover up: a kernel past it gains and one below it never pays for
// a region. The chunks (the crossovers they halve are measured in that section's grain table):
//   add, relu, copy   65536 elements
//   gelu, exp, tanh    2048 elements
//   softmax rows       1024 elements
//   Adam update        1024 parameters
//   SGD update         4096 parameters
// Convolution splits whole images (kernels/args.h, conv_chunks: 2^18 multiply-adds a chunk, some
// microseconds of GEMM, several region costs).
// On a machine whose regions cost more, each thread must bring proportionally more chunks
// (kernels/split_rule.h: work_scale, from `prism machine`'s measurement); the chunks themselves
// never change.
// Threads used are told to the profiler (note_threads), so an op's row shows how many threads
// its kernel ran on. Inside another parallel region (an op called from an OpenMP loop) a kernel
// runs serially, as OpenMP would run a nested region anyway.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <limits>
#include <vector>

#include "kernels/split_rule.h"
#include "profiler/recorder.h"

namespace prism::kernels::cpu {

// Items per chunk by op class: half the measured crossover (the table above).
constexpr int64_t kChunkElementwise = 65536;    // cheap ops (add, relu, copy): elements
constexpr int64_t kChunkTranscendental = 2048;  // exp, tanh, gelu, sigmoid, silu, backward
constexpr int64_t kChunkRowElements = 1024;     // row-wise ops: rows per chunk = this / cols
constexpr int64_t kChunkOptimizer = 1024;       // parameters per chunk of an Adam update
constexpr int64_t kChunkSgd = 4096;             // of an SGD update: 4 FLOPs a parameter, not 12

// A one-row product (gemv: a decoding step's every layer) is bound by reading the matrix, one
// element per multiply-add, not by the FMA units: its MACs take many times longer each than a
// GEMM's, so it pays for a region 16 times sooner. Measured with `prism lab matmul --sizes
// 1xKxN:nt --threads 1,2`: from 1 x 512 x 512 (262K MACs) up, GPT-2's tied head included, 2
// threads take a third to a half off the time; 1 x 256 x 256 (65K) gains too little to split
// (docs/PERFORMANCE.md, "A real model: GPT-2 small on the CPU (2026-11-29)", "Decoding (batch
// 1, KV cache)"). The kernels split the output's columns whole, each output one dot product over
// all of k on any thread count, so the bits do not depend on the split.
constexpr int64_t kParallelGemvMacs = int64_t{256} << 10;
// Each extra thread of a one-row product must bring half of that.
constexpr int64_t kGemvMacsPerThread = kParallelGemvMacs / 2;

// A product of two matrices (GEMM: the optimized and the bf16 matmuls, Eigen's products, the
// fused linear-GELU) splits from 4M multiply-adds, about 0.1 ms of one core's work (at 40
// GMAC/s), some 50 region costs: a descheduled second thread on a shared 2-core machine stalls
// the join for a scheduler slice, and below this the split does not earn it back
// (eigen_threads.h has the measurements); each extra thread must bring half of it.
constexpr int64_t kParallelGemmMacs = int64_t{4} << 20;
constexpr int64_t kGemmMacsPerThread = kParallelGemmMacs / 2;

// The number of chunks [0, n) is cut into.
inline int64_t chunk_count(int64_t n, int64_t chunk) {
  return n <= 0 ? 0 : (n + chunk - 1) / chunk;
}

// Rows per chunk for a row-wise op with `cols` elements a row: about `elements` elements a
// chunk, at least one row.
inline int64_t rows_per_chunk(int64_t cols, int64_t elements = kChunkRowElements) {
  return std::max<int64_t>(1, elements / std::max<int64_t>(cols, 1));
}

// Rows per chunk for an op that also sums across rows into one partial per chunk (a norm's
// weight gradient): a row-wise chunk, but at most kMaxPartials chunks, so the partials stay
// small; such an op uses at most kMaxPartials threads.
constexpr int64_t kMaxPartials = 16;
inline int64_t partial_rows_per_chunk(int64_t rows, int64_t cols) {
  return std::max(rows_per_chunk(cols), (rows + kMaxPartials - 1) / kMaxPartials);
}

// The threads a region over `chunks` chunks would use: never more than `max_threads` (a kernel
// with per-thread scratch for that many), one inside a parallel region, and at most as many as
// can each get work_scale(threads) chunks (one per chunk where regions cost what they did when
// the chunks were measured).
inline int threads_for(int64_t chunks, int max_threads = std::numeric_limits<int>::max()) {
  if (chunks < 2 || omp_in_parallel()) return 1;
  int t = static_cast<int>(std::min<int64_t>({omp_get_max_threads(), chunks, max_threads}));
  while (t > 1 && chunks < work_scale(t) * t) --t;
  return t;
}

// The threads for a product of `macs` multiply-adds that splits from `first` and gives each
// thread at least `per_thread`, both times the split rule's work_scale: the most threads t with
// macs >= first * work_scale(t) and macs >= t * per_thread * work_scale(t); one inside a
// parallel region.
inline int threads_for_macs(int64_t macs, int64_t first, int64_t per_thread) {
  // work_scale is at least 1: below `first` no count qualifies, and the small ops of a step
  // (most of its calls) skip the loop.
  if (macs < first || omp_in_parallel()) return 1;
  int t = omp_get_max_threads();
  for (; t > 1; --t) {
    const int64_t scale = work_scale(t);
    if (macs >= first * scale && macs / (per_thread * scale) >= t) break;
  }
  return t;
}

// Tells the profiler the innermost open op of this thread ran on `threads` threads.
inline void note_threads(int threads) {
  if (profiler::recording()) profiler::note_threads(threads);
}

// Calls body(c, begin, end) for every chunk c = [begin, end) of [0, n), chunks spread over the
// threads as described above, at most `max_threads` of them. A body may use omp_get_thread_num()
// (0 when serial) to pick per-thread scratch. An exception thrown by a body (an index out of
// range) is caught inside the region, which OpenMP requires, and the first one is rethrown on
// the calling thread after every thread has finished.
template <class Body>
void parallel_chunks(int64_t n, int64_t chunk, Body&& body,
                     int max_threads = std::numeric_limits<int>::max()) {
  const int64_t chunks = chunk_count(n, chunk);
  const int threads = threads_for(chunks, max_threads);
  note_threads(threads);
  auto run = [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) body(c, c * chunk, std::min(n, (c + 1) * chunk));
  };
  if (threads == 1) {
    run(0, chunks);
    return;
  }
  std::exception_ptr error;
#pragma omp parallel num_threads(threads)
  {
    // The runtime may give fewer threads than asked: split by the number actually running.
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    try {
      run(chunks * t / nt, chunks * (t + 1) / nt);
    } catch (...) {
#pragma omp critical(prism_parallel_chunks_error)
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

// Calls body(begin, end) over [0, n) in chunks, as parallel_chunks, for work whose chunks need
// not know their index (elementwise: every item is independent).
template <class Body>
void parallel_for(int64_t n, int64_t chunk, Body&& body) {
  parallel_chunks(n, chunk, [&](int64_t, int64_t begin, int64_t end) { body(begin, end); });
}

}  // namespace prism::kernels::cpu

namespace prism::kernels::cpu {

// Strided n-d walks split by rows: row r is an index over every dim but the last, and this is
// its offset in an operand with these strides (row-major over shape[0 .. ndim-2]).
inline int64_t row_offset(int64_t r, int ndim, const int64_t* shape, const int64_t* stride) {
  int64_t off = 0;
  for (int d = ndim - 2; d >= 0; --d) {
    off += (r % shape[d]) * stride[d];
    r /= shape[d];
  }
  return off;
}

// True when a view of this shape and these strides is row-major contiguous: one flat run of
// elements, which a walk should cut into chunks whatever its rank (a [1, N] view split by rows
// would be one chunk on one thread).
inline bool is_flat(int ndim, const int64_t* shape, const int64_t* stride) {
  int64_t expect = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    if (shape[d] != 1 && stride[d] != expect) return false;
    expect *= shape[d];
  }
  return true;
}

// For an op that writes per-row outputs and also sums a `width`-long vector over all its rows (a
// norm's weight gradient): chunks of rows over the threads (partial_rows_per_chunk), where
// body(r0, r1, acc) adds the terms of rows [r0, r1) into acc, its chunk's own zeroed partial;
// then the partials are added in chunk order into `sums` (width elements, overwritten).
template <class T, class Body>
void parallel_rows_summing(int64_t rows, int64_t cols, int64_t width, T* sums, Body&& body) {
  const int64_t per = partial_rows_per_chunk(rows, cols);
  std::vector<T> partial(static_cast<size_t>(chunk_count(rows, per) * width), T(0));
  parallel_chunks(rows, per, [&](int64_t c, int64_t r0, int64_t r1) {
    body(r0, r1, partial.data() + c * width);
  });
  std::fill(sums, sums + width, T(0));
  for (size_t c = 0; c < partial.size(); c += static_cast<size_t>(width)) {
    for (int64_t j = 0; j < width; ++j) sums[j] += partial[c + static_cast<size_t>(j)];
  }
}

}  // namespace prism::kernels::cpu
