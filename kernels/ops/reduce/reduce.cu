// Reductions on the GPU: sum, mean, max, argmax of each row of a 2-D strided view [rows, cols]
// (the tensor layer moves the reduced dims last and merges them, as for the CPU kernels).
//
// "naive" (tag naive): one thread per row, the CPU loop as it is. Each sum is accumulated in
// the CPU's order in double, so the results equal the CPU's bit for bit; but a single row (a
// full reduction, loss.sum()) runs on one thread of one SM, thousands of times slower than the
// device can go. The lesson's starting point.
//
// "optimized" (tag optimized): many threads per row, combined by a tree.
//   rows (col_stride 1, or any layout but the one below): a warp per row for rows up to 1024
//     elements, else a block of 256; thread t takes elements t, t + 32 (or 256), ... (so a
//     warp's loads are one contiguous 128-byte run), then kernels/cuda/row_reduce.cuh combines
//     the threads' results.
//   columns (row_stride 1: reducing a leading dim, such as a bias gradient summed over the
//     batch, [B, C] -> [C]): a warp per row would read 32 addresses C elements apart. Instead 32
//     threads take 32 neighbouring rows (one 128-byte load per step) and 8 threads split each
//     row's elements; the 8 partial results meet in shared memory.
//   A few long rows (a full reduction: one row of every element) would leave most SMs idle,
//   so each row is cut into chunks, one block each; a second small kernel folds each row's
//   chunk results in chunk order.
// Deterministic: every tree and every chunk split depends only on the shape, never on timing,
// and no float is added atomically; the same input gives the same bits on every run. Sums
// accumulate in double for float32 input (as on the CPU), so the result differs from the CPU's
// by at most the final rounding to float32; max and argmax return the same value and index as
// the CPU (first NaN if any, else the first occurrence of the maximum), whatever the tree.
//
// Cost: sum/mean: cols - 1 adds per row (+1 divide for mean); max/argmax: cols - 1 compares.
// Memory-bound: the figure to watch is GB/s, which `prism lab sum --device cuda` (and mean, max,
// argmax) prints; optimized is over an order of magnitude faster than naive, on rows and on
// columns (measured: docs/PERFORMANCE.md, "GPU (CUDA)").
#include <algorithm>
#include <cstdint>
#include <limits>

#include "kernels/cuda/cuda_common.h"
#include "kernels/cuda/kernel_list.h"
#include "kernels/cuda/row_reduce.cuh"
#include "kernels/ops/reduce/args.h"

namespace prism::kernels::cuda {
namespace {

// ---- what each reduction accumulates, and how it writes the result ------------------------

template <class T>
struct SumReducer {
  using Acc = double;  // float32 sums in double, as on the CPU
  __device__ static Acc identity() { return 0.0; }
  __device__ static Acc load(T v, int64_t) { return static_cast<double>(v); }
  __device__ static Acc combine(Acc a, Acc b) { return a + b; }
  __device__ static void write(const ReduceArgs<T>& a, int64_t row, Acc acc) {
    a.out[row] = static_cast<T>(acc);
  }
};

template <class T>
struct MeanReducer : SumReducer<T> {
  // The CPU's order: round the sum to T, then divide in T.
  __device__ static void write(const ReduceArgs<T>& a, int64_t row, double acc) {
    a.out[row] = static_cast<T>(acc) / static_cast<T>(a.cols);
  }
};

// A candidate for the maximum: its value and its position in the row.
template <class T>
struct ArgMax {
  T v;
  int64_t i;
};
// Shuffles for group_reduce, found by argument-dependent lookup. (Qualified inside: here the
// unqualified name would find only these overloads, which hide the scalar ones.)
template <class T>
__device__ ArgMax<T> shfl_down(ArgMax<T> a, int delta) {
  return {cuda::shfl_down(a.v, delta), cuda::shfl_down(a.i, delta)};
}
template <class T>
__device__ ArgMax<T> shfl_from(ArgMax<T> a, int lane) {
  return {cuda::shfl_from(a.v, lane), cuda::shfl_from(a.i, lane)};
}

// The better of two candidates in one total order: NaN beats every number (it propagates, as on
// the CPU and in NumPy), a larger value beats a smaller one, and between equals (two NaNs
// included) the lower position wins. An order, not "the left one on ties", so the result is the
// CPU's (first NaN, else first maximum) whichever way a tree pairs the candidates.
template <class T>
__device__ ArgMax<T> better(ArgMax<T> a, ArgMax<T> b) {
  const bool a_nan = a.v != a.v, b_nan = b.v != b.v;
  if (a_nan != b_nan) return a_nan ? a : b;
  if (!a_nan) {
    if (a.v > b.v) return a;
    if (b.v > a.v) return b;
  }
  return a.i <= b.i ? a : b;
}

template <class T>
struct MaxReducer {
  using Acc = ArgMax<T>;
  // -inf at no position: loses to every element, a -inf element included (by position).
  __device__ static Acc identity() {
    return {-std::numeric_limits<T>::infinity(), std::numeric_limits<int64_t>::max()};
  }
  __device__ static Acc load(T v, int64_t i) { return {v, i}; }
  __device__ static Acc combine(Acc a, Acc b) { return better(a, b); }
  __device__ static void write(const ReduceArgs<T>& a, int64_t row, Acc acc) {
    if (a.out) a.out[row] = acc.v;
    if (a.index) a.index[row] = acc.i;
  }
};

template <class R>
struct Combine {
  template <class A>
  __device__ A operator()(A a, A b) const {
    return R::combine(a, b);
  }
};

// ---- naive: one thread per row, the CPU's loops ---------------------------------------------

template <class T, bool kMean>
__global__ void sum_rows_naive(ReduceArgs<T> a) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; o < a.rows;
       o += step) {
    const T* row = a.x + o * a.row_stride;
    double acc = 0;
    for (int64_t i = 0; i < a.cols; ++i) acc += static_cast<double>(row[i * a.col_stride]);
    a.out[o] = kMean ? static_cast<T>(acc) / static_cast<T>(a.cols) : static_cast<T>(acc);
  }
}

template <class T>
__global__ void max_rows_naive(ReduceArgs<T> a) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; o < a.rows;
       o += step) {
    const T* row = a.x + o * a.row_stride;
    T best = row[0];
    int64_t at = 0;
    for (int64_t i = 1; i < a.cols && best == best; ++i) {
      const T v = row[i * a.col_stride];
      if (v > best || v != v) {
        best = v;
        at = i;
      }
    }
    if (a.out) a.out[o] = best;
    if (a.index) a.index[o] = at;
  }
}

template <class T>
void sum_naive(const ReduceArgs<T>& a) {
  sum_rows_naive<T, false><<<grid_for(a.rows), kBlock, 0, stream()>>>(a);
  PRISM_CUDA_CHECK_LAUNCH("sum (naive)");
}
template <class T>
void mean_naive(const ReduceArgs<T>& a) {
  sum_rows_naive<T, true><<<grid_for(a.rows), kBlock, 0, stream()>>>(a);
  PRISM_CUDA_CHECK_LAUNCH("mean (naive)");
}
template <class T>
void max_naive(const ReduceArgs<T>& a) {
  max_rows_naive<T><<<grid_for(a.rows), kBlock, 0, stream()>>>(a);
  PRISM_CUDA_CHECK_LAUNCH("max (naive)");
}

// ---- optimized: trees of threads -------------------------------------------------------------

// Row layout, no split: kThreads threads per row.
template <class T, class R, int kThreads>
__global__ void reduce_rows(ReduceArgs<T> a) {
  using Spread = RowSpread<kThreads>;
  for (int64_t row = Spread::first_row(); row < a.rows; row += Spread::row_step()) {
    const T* x = a.x + row * a.row_stride;
    typename R::Acc acc = R::identity();
    for (int64_t i = threadIdx.x; i < a.cols; i += kThreads) {
      acc = R::combine(acc, R::load(x[i * a.col_stride], i));
    }
    acc = group_reduce<kThreads>(acc, Combine<R>{});
    if (threadIdx.x == 0) R::write(a, row, acc);
  }
}

// Row layout, split: block (c, row) reduces elements [c * chunk, (c + 1) * chunk) of its row
// into partial[row * chunks + c]. Launched with few rows (grid.y = rows <= 512).
template <class T, class R>
__global__ void reduce_row_chunks(ReduceArgs<T> a, int64_t chunk, typename R::Acc* partial) {
  const int64_t row = blockIdx.y;
  const int64_t begin = static_cast<int64_t>(blockIdx.x) * chunk;
  const int64_t end = begin + chunk < a.cols ? begin + chunk : a.cols;
  const T* x = a.x + row * a.row_stride;
  typename R::Acc acc = R::identity();
  for (int64_t i = begin + threadIdx.x; i < end; i += kRowBlockThreads) {
    acc = R::combine(acc, R::load(x[i * a.col_stride], i));
  }
  acc = group_reduce<kRowBlockThreads>(acc, Combine<R>{});
  if (threadIdx.x == 0) partial[row * gridDim.x + blockIdx.x] = acc;
}

// Column layout (row_stride 1): threadIdx.x picks one of 32 neighbouring rows, threadIdx.y
// one of 8 interleaved slices of chunk c (blockIdx.y) of its elements. The 8 slices are folded
// in slice order; the result goes to partial[row * chunks + c], or straight to the output when
// there is one chunk (partial == nullptr).
constexpr int kColRows = 32;
constexpr int kColSlices = 8;

template <class T, class R>
__global__ void reduce_columns(ReduceArgs<T> a, int64_t chunk, typename R::Acc* partial) {
  using Acc = typename R::Acc;
  __shared__ Acc slice[kColSlices][kColRows];
  const int64_t begin = static_cast<int64_t>(blockIdx.y) * chunk;
  const int64_t end = begin + chunk < a.cols ? begin + chunk : a.cols;
  // Uniform across the block (it depends on blockIdx only), so the barriers below are safe.
  for (int64_t row0 = static_cast<int64_t>(blockIdx.x) * kColRows; row0 < a.rows;
       row0 += static_cast<int64_t>(gridDim.x) * kColRows) {
    const int64_t row = row0 + threadIdx.x;
    Acc acc = R::identity();
    if (row < a.rows) {
      const T* x = a.x + row;  // row_stride is 1
      for (int64_t i = begin + threadIdx.y; i < end; i += kColSlices) {
        acc = R::combine(acc, R::load(x[i * a.col_stride], i));
      }
    }
    slice[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && row < a.rows) {
      Acc r = slice[0][threadIdx.x];
      for (int s = 1; s < kColSlices; ++s) r = R::combine(r, slice[s][threadIdx.x]);
      if (partial) {
        partial[row * gridDim.y + blockIdx.y] = r;
      } else {
        R::write(a, row, r);
      }
    }
    __syncthreads();  // `slice` is read before the next rows overwrite it
  }
}

// Second stage of a split: a warp per row folds its `chunks` partial results in chunk order
// (lane l takes chunks l, l + 32, ...; then the warp's tree) and writes the output.
template <class T, class R>
__global__ void fold_partials(ReduceArgs<T> a, int64_t chunks, const typename R::Acc* partial) {
  using Spread = RowSpread<32>;
  for (int64_t row = Spread::first_row(); row < a.rows; row += Spread::row_step()) {
    typename R::Acc acc = R::identity();
    for (int64_t c = threadIdx.x; c < chunks; c += 32) {
      acc = R::combine(acc, partial[row * chunks + c]);
    }
    acc = group_reduce<32>(acc, Combine<R>{});
    if (threadIdx.x == 0) R::write(a, row, acc);
  }
}

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}
int64_t clamp(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

// Enough blocks in flight to cover an H100's 132 SMs a few times over.
constexpr int64_t kTargetBlocks = 512;
// Elements per block below which splitting a row costs more (a second launch, a partial
// buffer) than it gains.
constexpr int64_t kMinRowChunk = 4096;
constexpr int64_t kMinColumnChunk = 256;
constexpr int64_t kMaxChunks = 1024;

template <class T, class R>
void reduce_optimized(const ReduceArgs<T>& a, const char* name) {
  using Acc = typename R::Acc;
  if (a.rows == 0) return;
  const bool columns = a.row_stride == 1 && a.col_stride != 1 && a.rows > 1;
  if (columns) {
    const int64_t row_blocks = ceil_div(a.rows, kColRows);
    const int64_t chunks =
        clamp(std::min(ceil_div(a.cols, kMinColumnChunk), ceil_div(kTargetBlocks, row_blocks)), 1,
              kMaxChunks);
    const int64_t chunk = ceil_div(a.cols, chunks);
    const dim3 grid(static_cast<unsigned>(std::min<int64_t>(row_blocks, 65535)),
                    static_cast<unsigned>(chunks));
    const dim3 block(kColRows, kColSlices);
    if (chunks == 1) {
      reduce_columns<T, R><<<grid, block, 0, stream()>>>(a, chunk, nullptr);
      PRISM_CUDA_CHECK_LAUNCH(name);
      return;
    }
    DeviceBuffer partial(static_cast<size_t>(a.rows * chunks) * sizeof(Acc));
    reduce_columns<T, R><<<grid, block, 0, stream()>>>(a, chunk, partial.as<Acc>());
    PRISM_CUDA_CHECK_LAUNCH(name);
    fold_partials<T, R><<<RowSpread<32>::grid(a.rows), RowSpread<32>::block(), 0, stream()>>>(
        a, chunks, partial.as<Acc>());
    PRISM_CUDA_CHECK_LAUNCH(name);
    return;
  }
  const int64_t chunks =
      a.rows >= kTargetBlocks
          ? 1
          : clamp(std::min(ceil_div(a.cols, kMinRowChunk), ceil_div(kTargetBlocks, a.rows)), 1,
                  kMaxChunks);
  if (chunks == 1) {
    if (warp_per_row(a.cols)) {
      using S = RowSpread<32>;
      reduce_rows<T, R, 32><<<S::grid(a.rows), S::block(), 0, stream()>>>(a);
    } else {
      using S = RowSpread<kRowBlockThreads>;
      reduce_rows<T, R, kRowBlockThreads><<<S::grid(a.rows), S::block(), 0, stream()>>>(a);
    }
    PRISM_CUDA_CHECK_LAUNCH(name);
    return;
  }
  // Here rows < kTargetBlocks, so one grid row per output row fits grid.y.
  const int64_t chunk = ceil_div(a.cols, chunks);
  DeviceBuffer partial(static_cast<size_t>(a.rows * chunks) * sizeof(Acc));
  const dim3 grid(static_cast<unsigned>(chunks), static_cast<unsigned>(a.rows));
  reduce_row_chunks<T, R><<<grid, kRowBlockThreads, 0, stream()>>>(a, chunk, partial.as<Acc>());
  PRISM_CUDA_CHECK_LAUNCH(name);
  fold_partials<T, R><<<RowSpread<32>::grid(a.rows), RowSpread<32>::block(), 0, stream()>>>(
      a, chunks, partial.as<Acc>());
  PRISM_CUDA_CHECK_LAUNCH(name);
}

template <class T>
void sum_optimized(const ReduceArgs<T>& a) {
  reduce_optimized<T, SumReducer<T>>(a, "sum (optimized)");
}
template <class T>
void mean_optimized(const ReduceArgs<T>& a) {
  reduce_optimized<T, MeanReducer<T>>(a, "mean (optimized)");
}
template <class T>
void max_optimized(const ReduceArgs<T>& a) {
  reduce_optimized<T, MaxReducer<T>>(a, "max (optimized)");
}

}  // namespace

void register_reduce(Registry& r) {
  const char* naive_idea = "one thread per row, the CPU loop (double accumulator)";
  const char* opt_idea = "a warp or block per row (columns: 32 rows x 8 slices), tree, split rows";
  r.op("sum", Device::cuda)
      .add<ReduceArgs>("naive", VariantTag::naive, naive_idea, &sum_naive<float>,
                       &sum_naive<double>);
  r.op("sum", Device::cuda)
      .add<ReduceArgs>("optimized", VariantTag::optimized, opt_idea, &sum_optimized<float>,
                       &sum_optimized<double>);
  r.op("mean", Device::cuda)
      .add<ReduceArgs>("naive", VariantTag::naive, naive_idea, &mean_naive<float>,
                       &mean_naive<double>);
  r.op("mean", Device::cuda)
      .add<ReduceArgs>("optimized", VariantTag::optimized, opt_idea, &mean_optimized<float>,
                       &mean_optimized<double>);
  for (const char* op : {"max", "argmax"}) {
    r.op(op, Device::cuda)
        .add<ReduceArgs>("naive", VariantTag::naive, "one thread per row, the CPU loop",
                         &max_naive<float>, &max_naive<double>);
    r.op(op, Device::cuda)
        .add<ReduceArgs>("optimized", VariantTag::optimized, opt_idea, &max_optimized<float>,
                         &max_optimized<double>);
  }
}
PRISM_CUDA_KERNELS(30, register_reduce);

}  // namespace prism::kernels::cuda
