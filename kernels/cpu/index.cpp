// Indexing kernels: gather / scatter_add (torch.gather and its gradient) and index_select /
// index_add (row lookup, as in an embedding, and its gradient).
//
// Idea: plain loops; every index is checked against the dim size, because an out-of-range
// label must be an error message, not a read of someone else's memory.
// Cost: 0 FLOPs for gather / index_select (data movement); 1 FLOP per element for the
// accumulating scatter_add / index_add.
#include <string>

#include "kernels/cpu/kernel_list.h"

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
void index_select_naive(const IndexSelectArgs<T>& a) {
  for (int64_t j = 0; j < a.count; ++j) {
    if (a.index[j] < 0 || a.index[j] >= a.n) index_error("index_select", a.index[j], a.dim, a.n);
  }
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
  for (int64_t j = 0; j < a.count; ++j) {
    if (a.index[j] < 0 || a.index[j] >= a.n) index_error("index_add", a.index[j], a.dim, a.n);
  }
  for (int64_t o = 0; o < a.outer; ++o) {
    for (int64_t j = 0; j < a.count; ++j) {
      const T* src = a.x + (o * a.count + j) * a.inner;
      T* dst = a.out + (o * a.n + a.index[j]) * a.inner;
      for (int64_t i = 0; i < a.inner; ++i) dst[i] += src[i];
    }
  }
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
}
PRISM_CPU_KERNELS(180, register_index);

}  // namespace prism::kernels::cpu
