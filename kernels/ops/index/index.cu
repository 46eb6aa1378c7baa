// Indexing kernels on the GPU: gather / scatter_add (torch.gather and its gradient) and
// index_select / index_add (row lookup, as in an embedding, and its gradient). The argument
// structs and the math are those of the CPU kernels (kernels/ops/index/index.cpp).
//
// gather, index_select: one thread per output element; it decodes its element number into
// coordinates (kernels/cuda/strided.cuh), reads its index and copies one element.
//
// scatter_add, index_add accumulate, and several source elements may land on the same
// destination (a token that appears twice in a batch). Float atomics would make the sum's
// order, and so its last bits, change from run to run. Instead each thread owns a set of
// destinations no other thread touches and walks its sources in the CPU's order, so the result
// equals the CPU's bit for bit, every run:
//   scatter_add: one thread per "fibre" of the index along `dim` (every coordinate but dim's
//     fixed); the fibre's destinations differ from every other fibre's in some other coordinate.
//   index_add: one thread per (outer, inner) column; it adds rows j = 0, 1, ... in order.
// The price is parallelism: index_add runs outer x inner threads, each looping over `count`
// rows (an embedding's backward: one thread per feature, each walking every token). A
// sort-by-destination variant would lift that limit and stay deterministic.
//
// Every index is checked against its dim's size: an out-of-range one is skipped on the device
// and reported by position (kernels/cuda/bad_index.cuh), so the launcher throws the same
// message as the CPU kernel, for the same (first) index. That costs one wait for the device.
//
// Cost: 0 FLOPs for gather / index_select (data movement); 1 FLOP per element for scatter_add
// / index_add. Passed the CUDA test suite on an NVIDIA H200 (2026-11-26); not timed alone. In
// the GPU profile of `prism train transformer --steps 60 --device cuda --profile`, index_add as
// index_select's gradient runs far below the device's bandwidth: the one-thread-per-column
// limit above (measured: docs/PERFORMANCE.md, "GPU (CUDA)").
#include <cstdint>
#include <string>

#include "kernels/cuda/bad_index.cuh"
#include "kernels/cuda/cuda_common.h"
#include "kernels/cuda/kernel_list.h"
#include "kernels/cuda/strided.cuh"
#include "kernels/ops/index/args.h"

namespace prism::kernels::cuda {
namespace {

[[noreturn]] void index_error(const char* op, int64_t v, int dim, int64_t size) {
  throw Error(std::string(op) + ": index " + std::to_string(v) + " is out of range for dim " +
              std::to_string(dim) + " of size " + std::to_string(size));
}

// ---- gather / scatter_add --------------------------------------------------------------------

// out[i] = x[x offset of i's coordinates, with index[i] along dim].
template <class T, class I>
__global__ void gather_kernel(GatherArgs<T> a, I n, BadIndexWord* bad) {
  const I step = static_cast<I>(gridDim.x) * blockDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t io = 0, xo = 0;
    I rest = i;
    for (int d = a.ndim - 1; d >= 0; --d) {
      const I size = static_cast<I>(a.shape[d]);
      const I q = rest / size;
      const int64_t c = static_cast<int64_t>(rest - q * size);
      io += c * a.index_stride[d];
      if (d != a.dim) xo += c * a.x_stride[d];
      rest = q;
    }
    const int64_t v = a.index[io];
    if (v < 0 || v >= a.dim_size) {
      flag_bad_index(bad, static_cast<int64_t>(i));
      continue;
    }
    a.out[i] = a.x[xo + v * a.x_stride[a.dim]];
  }
}

// One thread per fibre along dim: out[x offset with index along dim] += src[i], in the order
// of the fibre's elements (the CPU's order). a.x is src, contiguous with the index's shape.
template <class T>
__global__ void scatter_add_kernel(GatherArgs<T> a, int64_t fibres, BadIndexWord* bad) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t f = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; f < fibres;
       f += step) {
    // Decode f over every dim but `dim` (row-major), giving the fibre's first element: its
    // number i0 in the index's shape, its index offset io0 and its destination offset xo.
    int64_t rest = f, i0 = 0, io0 = 0, xo = 0, dim_step = 1, lin = 1;
    for (int d = a.ndim - 1; d >= 0; --d) {
      if (d == a.dim) {
        dim_step = lin;  // element numbers advance by this along dim
      } else {
        const int64_t c = rest % a.shape[d];
        rest /= a.shape[d];
        i0 += c * lin;
        io0 += c * a.index_stride[d];
        xo += c * a.x_stride[d];
      }
      lin *= a.shape[d];
    }
    for (int64_t k = 0; k < a.shape[a.dim]; ++k) {
      const int64_t i = i0 + k * dim_step;
      const int64_t v = a.index[io0 + k * a.index_stride[a.dim]];
      if (v < 0 || v >= a.dim_size) {
        flag_bad_index(bad, i);
        continue;
      }
      a.out[xo + v * a.x_stride[a.dim]] += a.x[i];
    }
  }
}

// The index's offset of element number i (host side, for an error message).
template <class T>
int64_t index_offset(const GatherArgs<T>& a, int64_t i) {
  int64_t off = 0;
  for (int d = a.ndim - 1; d >= 0; --d) {
    off += (i % a.shape[d]) * a.index_stride[d];
    i /= a.shape[d];
  }
  return off;
}

template <class T>
void report_bad_gather_index(const char* op, const GatherArgs<T>& a, const FirstBadIndex& bad) {
  const int64_t i = bad.read();
  if (i < 0) return;
  index_error(op, read_device_int64(a.index + index_offset(a, i)), a.dim, a.dim_size);
}

int64_t numel_of(int ndim, const int64_t* shape) {
  int64_t n = 1;
  for (int d = 0; d < ndim; ++d) n *= shape[d];
  return n;
}

template <class T>
void gather_naive(const GatherArgs<T>& a) {
  const int64_t n = numel_of(a.ndim, a.shape);
  if (n == 0) return;
  FirstBadIndex bad;
  if (fits_32bit(n)) {
    gather_kernel<T, uint32_t>
        <<<grid_for(n), kBlock, 0, stream()>>>(a, static_cast<uint32_t>(n), bad.device());
  } else {
    gather_kernel<T, int64_t><<<grid_for(n), kBlock, 0, stream()>>>(a, n, bad.device());
  }
  PRISM_CUDA_CHECK_LAUNCH("gather (naive)");
  report_bad_gather_index("gather", a, bad);
}

template <class T>
void scatter_add_naive(const GatherArgs<T>& a) {
  const int64_t n = numel_of(a.ndim, a.shape);
  if (n == 0) return;
  const int64_t fibres = n / a.shape[a.dim];
  FirstBadIndex bad;
  scatter_add_kernel<T><<<grid_for(fibres), kBlock, 0, stream()>>>(a, fibres, bad.device());
  PRISM_CUDA_CHECK_LAUNCH("scatter_add (naive)");
  report_bad_gather_index("scatter_add", a, bad);
}

// ---- index_select / index_add ----------------------------------------------------------------

// out[o, j, i] = x[o, index[j], i], one thread per output element.
template <class T, class I>
__global__ void index_select_kernel(IndexSelectArgs<T> a, I total, BadIndexWord* bad) {
  const I inner = static_cast<I>(a.inner), count = static_cast<I>(a.count);
  const I step = static_cast<I>(gridDim.x) * blockDim.x;
  for (I e = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += step) {
    const I row = e / inner;  // o * count + j
    const I i = e - row * inner;
    const I o = row / count;
    const I j = row - o * count;
    const int64_t v = a.index[j];
    if (v < 0 || v >= a.n) {
      flag_bad_index(bad, static_cast<int64_t>(j));
      continue;
    }
    a.out[e] = a.x[(static_cast<int64_t>(o) * a.n + v) * a.inner + static_cast<int64_t>(i)];
  }
}

// out[o, index[j], i] += x[o, j, i] for j = 0, 1, ... in order; one thread per (o, i).
template <class T>
__global__ void index_add_kernel(IndexSelectArgs<T> a, BadIndexWord* bad) {
  const int64_t columns = a.outer * a.inner;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < columns;
       c += step) {
    const int64_t o = c / a.inner, i = c - o * a.inner;
    const T* src = a.x + o * a.count * a.inner + i;
    T* dst = a.out + o * a.n * a.inner + i;
    for (int64_t j = 0; j < a.count; ++j) {
      const int64_t v = a.index[j];
      if (v < 0 || v >= a.n) {
        flag_bad_index(bad, j);
        continue;
      }
      dst[v * a.inner] += src[j * a.inner];
    }
  }
}

// Only checks the indices: for an empty output, where the CPU still refuses a bad index.
template <class T>
__global__ void check_row_indices(IndexSelectArgs<T> a, BadIndexWord* bad) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < a.count;
       j += step) {
    if (a.index[j] < 0 || a.index[j] >= a.n) flag_bad_index(bad, j);
  }
}

template <class T>
void report_bad_row_index(const char* op, const IndexSelectArgs<T>& a, const FirstBadIndex& bad) {
  const int64_t j = bad.read();
  if (j < 0) return;
  index_error(op, read_device_int64(a.index + j), a.dim, a.n);
}

template <class T>
void index_select_naive(const IndexSelectArgs<T>& a) {
  const int64_t total = a.outer * a.count * a.inner;
  if (a.count == 0) return;
  FirstBadIndex bad;
  if (total == 0) {
    check_row_indices<T><<<grid_for(a.count), kBlock, 0, stream()>>>(a, bad.device());
  } else if (fits_32bit(total)) {
    index_select_kernel<T, uint32_t>
        <<<grid_for(total), kBlock, 0, stream()>>>(a, static_cast<uint32_t>(total), bad.device());
  } else {
    index_select_kernel<T, int64_t>
        <<<grid_for(total), kBlock, 0, stream()>>>(a, total, bad.device());
  }
  PRISM_CUDA_CHECK_LAUNCH("index_select (naive)");
  report_bad_row_index("index_select", a, bad);
}

template <class T>
void index_add_naive(const IndexSelectArgs<T>& a) {
  const int64_t columns = a.outer * a.inner;
  if (a.count == 0) return;
  FirstBadIndex bad;
  if (columns == 0) {
    check_row_indices<T><<<grid_for(a.count), kBlock, 0, stream()>>>(a, bad.device());
  } else {
    index_add_kernel<T><<<grid_for(columns), kBlock, 0, stream()>>>(a, bad.device());
  }
  PRISM_CUDA_CHECK_LAUNCH("index_add (naive)");
  report_bad_row_index("index_add", a, bad);
}

}  // namespace

void register_index(Registry& r) {
  r.op("gather", Device::cuda)
      .add<GatherArgs>("naive", VariantTag::naive, "one thread per output element, index checked",
                       &gather_naive<float>, &gather_naive<double>, &gather_naive<int64_t>);
  r.op("scatter_add", Device::cuda)
      .add<GatherArgs>("naive", VariantTag::naive,
                       "one thread per fibre along dim, in order (deterministic, no atomics)",
                       &scatter_add_naive<float>, &scatter_add_naive<double>);
  r.op("index_select", Device::cuda)
      .add<IndexSelectArgs>("naive", VariantTag::naive, "one thread per output element",
                            &index_select_naive<float>, &index_select_naive<double>,
                            &index_select_naive<int64_t>);
  r.op("index_add", Device::cuda)
      .add<IndexSelectArgs>("naive", VariantTag::naive,
                            "one thread per (outer, inner) column, rows in order (no atomics)",
                            &index_add_naive<float>, &index_add_naive<double>);
}
PRISM_CUDA_KERNELS(90, register_index);

}  // namespace prism::kernels::cuda
