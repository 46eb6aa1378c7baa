// Indexing kernels: gather / scatter_add (torch.gather and its gradient) and index_select /
// index_add (row lookup, as in an embedding, and its gradient).
//
// Idea: plain loops; every index is checked against the dim size, because an out-of-range
// label must be an error message, not a read of someone else's memory.
// Cost: 0 FLOPs for gather / index_select (data movement); 1 FLOP per element for the
// accumulating scatter_add / index_add.
#include <algorithm>
#include <string>

#include "kernels/cpu/kernel_list.h"
#include "kernels/cpu/parallel.h"
#include "kernels/ops/index/args.h"

namespace prism::kernels::cpu {
namespace {

[[noreturn]] void index_error(const char* op, int64_t v, int dim, int64_t size) {
  throw Error(std::string(op) + ": index " + std::to_string(v) + " is out of range for dim " +
              std::to_string(dim) + " of size " + std::to_string(size));
}

// Calls f(i, x_offset_without_dim, index_offset) for every element of the index, in order.
template <class T, class F>
void walk(const GatherArgs<T>& a, F&& f) {
  int64_t numel = 1;
  for (int d = 0; d < a.ndim; ++d) numel *= a.shape[d];
  int64_t idx[kMaxDims] = {};
  for (int64_t i = 0; i < numel; ++i) {
    int64_t xo = 0, io = 0;
    for (int d = 0; d < a.ndim; ++d) {
      io += idx[d] * a.index_stride[d];
      if (d != a.dim) xo += idx[d] * a.x_stride[d];
    }
    f(i, xo, io);
    for (int d = a.ndim - 1; d >= 0; --d) {
      if (++idx[d] < a.shape[d]) break;
      idx[d] = 0;
    }
  }
}

template <class T>
void gather_naive(const GatherArgs<T>& a) {
  walk(a, [&](int64_t i, int64_t xo, int64_t io) {
    int64_t v = a.index[io];
    if (v < 0 || v >= a.dim_size) index_error("gather", v, a.dim, a.dim_size);
    a.out[i] = a.x[xo + v * a.x_stride[a.dim]];
  });
}

template <class T>
void scatter_add_naive(const GatherArgs<T>& a) {
  walk(a, [&](int64_t i, int64_t xo, int64_t io) {
    int64_t v = a.index[io];
    if (v < 0 || v >= a.dim_size) index_error("scatter_add", v, a.dim, a.dim_size);
    a.out[xo + v * a.x_stride[a.dim]] += a.x[i];
  });
}

template <class T>
void check_indices(const IndexSelectArgs<T>& a, const char* op) {
  for (int64_t j = 0; j < a.count; ++j) {
    if (a.index[j] < 0 || a.index[j] >= a.n) index_error(op, a.index[j], a.dim, a.n);
  }
}

template <class T>
void index_select_naive(const IndexSelectArgs<T>& a) {
  check_indices(a, "index_select");
  for (int64_t o = 0; o < a.outer; ++o) {
    for (int64_t j = 0; j < a.count; ++j) {
      const T* src = a.x + (o * a.n + a.index[j]) * a.inner;
      T* dst = a.out + (o * a.count + j) * a.inner;
      for (int64_t i = 0; i < a.inner; ++i) dst[i] = src[i];
    }
  }
}

// The gradient of index_select: out (shape [outer, n, inner], zeroed) += rows of x.
template <class T>
void index_add_naive(const IndexSelectArgs<T>& a) {
  check_indices(a, "index_add");
  for (int64_t o = 0; o < a.outer; ++o) {
    for (int64_t j = 0; j < a.count; ++j) {
      const T* src = a.x + (o * a.count + j) * a.inner;
      T* dst = a.out + (o * a.n + a.index[j]) * a.inner;
      for (int64_t i = 0; i < a.inner; ++i) dst[i] += src[i];
    }
  }
}

// ---- optimized variants: the same loops, split over the threads (kernels/cpu/parallel.h) ----
// gather and scatter_add in "lines": all positions that share every coordinate but `dim`. A
// scatter_add line writes only to its own line of out, so lines never collide and each output
// receives its adds in index order: the same bits on any thread count. index_select splits
// its output rows, index_add the columns (inner) of every row, for the same reason.

// The offsets of line l (its coordinates over every dim but a.dim) in x and index.
template <class T>
void line_offsets(const GatherArgs<T>& a, int64_t l, int64_t& xo, int64_t& io) {
  xo = io = 0;
  for (int d = a.ndim - 1; d >= 0; --d) {
    if (d == a.dim) continue;
    const int64_t c = l % a.shape[d];
    l /= a.shape[d];
    xo += c * a.x_stride[d];
    io += c * a.index_stride[d];
  }
}

// The contiguous (gather: out; scatter_add: src) offset of element (line l, position k along
// dim): the row-major index over `shape`.
template <class T>
int64_t line_element(const GatherArgs<T>& a, int64_t l, int64_t k) {
  int64_t flat = 0, stride = 1;
  for (int d = a.ndim - 1; d >= 0; --d) {
    int64_t c = k;
    if (d != a.dim) {
      c = l % a.shape[d];
      l /= a.shape[d];
    }
    flat += c * stride;
    stride *= a.shape[d];
  }
  return flat;
}

template <class T, bool kScatter>
void by_lines(const GatherArgs<T>& a) {
  int64_t numel = 1;
  for (int d = 0; d < a.ndim; ++d) numel *= a.shape[d];
  const int64_t len = a.shape[a.dim];
  if (numel == 0) return;
  const char* op = kScatter ? "scatter_add" : "gather";
  parallel_for(numel / len, rows_per_chunk(len, kChunkElementwise), [&](int64_t l0, int64_t l1) {
    for (int64_t l = l0; l < l1; ++l) {
      int64_t xo, io;
      line_offsets(a, l, xo, io);
      const int64_t e0 = line_element(a, l, 0);
      int64_t e_stride = 1;  // contiguous elements between positions k and k + 1 along dim
      for (int d = a.dim + 1; d < a.ndim; ++d) e_stride *= a.shape[d];
      for (int64_t k = 0; k < len; ++k) {
        const int64_t v = a.index[io + k * a.index_stride[a.dim]];
        if (v < 0 || v >= a.dim_size) index_error(op, v, a.dim, a.dim_size);
        if constexpr (kScatter) {
          a.out[xo + v * a.x_stride[a.dim]] += a.x[e0 + k * e_stride];
        } else {
          a.out[e0 + k * e_stride] = a.x[xo + v * a.x_stride[a.dim]];
        }
      }
    }
  });
}

template <class T>
void gather_optimized(const GatherArgs<T>& a) {
  by_lines<T, false>(a);
}
template <class T>
void scatter_add_optimized(const GatherArgs<T>& a) {
  by_lines<T, true>(a);
}

template <class T>
void index_select_optimized(const IndexSelectArgs<T>& a) {
  check_indices(a, "index_select");
  parallel_for(a.outer * a.count, rows_per_chunk(a.inner, kChunkElementwise),
               [&](int64_t r0, int64_t r1) {
                 for (int64_t r = r0; r < r1; ++r) {
                   const int64_t o = r / a.count, j = r % a.count;
                   const T* src = a.x + (o * a.n + a.index[j]) * a.inner;
                   std::copy(src, src + a.inner, a.out + r * a.inner);
                 }
               });
}

// index_add (an embedding's backward): rows of src land on repeated rows of out, so threads
// split the columns instead, each adding every row's slice [i0, i1) in row order.
template <class T>
void index_add_optimized(const IndexSelectArgs<T>& a) {
  check_indices(a, "index_add");
  const int64_t per =
      std::max<int64_t>(16, kChunkElementwise / std::max<int64_t>(1, a.outer * a.count));
  parallel_for(a.inner, per, [&](int64_t i0, int64_t i1) {
    for (int64_t o = 0; o < a.outer; ++o) {
      for (int64_t j = 0; j < a.count; ++j) {
        const T* src = a.x + (o * a.count + j) * a.inner;
        T* dst = a.out + (o * a.n + a.index[j]) * a.inner;
#pragma omp simd
        for (int64_t i = i0; i < i1; ++i) dst[i] += src[i];
      }
    }
  });
}

}  // namespace

void register_index(Registry& r) {
  r.op("gather", Device::cpu)
      .add<GatherArgs>("naive", VariantTag::naive, "loop over the index", &gather_naive<float>,
                       &gather_naive<double>, &gather_naive<int64_t>);
  r.op("scatter_add", Device::cpu)
      .add<GatherArgs>("naive", VariantTag::naive, "loop over the index", &scatter_add_naive<float>,
                       &scatter_add_naive<double>);
  r.op("index_select", Device::cpu)
      .add<IndexSelectArgs>("naive", VariantTag::naive, "row copies", &index_select_naive<float>,
                            &index_select_naive<double>, &index_select_naive<int64_t>);
  r.op("index_add", Device::cpu)
      .add<IndexSelectArgs>("naive", VariantTag::naive, "row accumulation", &index_add_naive<float>,
                            &index_add_naive<double>);
  r.op("gather", Device::cpu)
      .add<GatherArgs>("optimized", VariantTag::optimized, "lines over threads",
                       &gather_optimized<float>, &gather_optimized<double>,
                       &gather_optimized<int64_t>);
  r.op("scatter_add", Device::cpu)
      .add<GatherArgs>("optimized", VariantTag::optimized, "lines over threads, no collisions",
                       &scatter_add_optimized<float>, &scatter_add_optimized<double>);
  r.op("index_select", Device::cpu)
      .add<IndexSelectArgs>("optimized", VariantTag::optimized, "row copies over threads",
                            &index_select_optimized<float>, &index_select_optimized<double>,
                            &index_select_optimized<int64_t>);
  r.op("index_add", Device::cpu)
      .add<IndexSelectArgs>("optimized", VariantTag::optimized, "columns over threads",
                            &index_add_optimized<float>, &index_add_optimized<double>);
}
PRISM_CPU_KERNELS(180, register_index);

}  // namespace prism::kernels::cpu
