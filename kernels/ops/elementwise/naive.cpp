// Elementwise ops, naive variant: one loop over the output, strided reads of the inputs.
//
// Idea: walk the output in order with an "odometer" over the (merged) dims, carrying each
// input's offset along, so a broadcast input (stride 0) or a transposed view costs no copy.
// Cost: 1 pass over memory; bound by bandwidth, not FLOPs (a few FLOPs per 8-12 bytes moved).
#include "kernels/cpu/kernel_list.h"
#include "kernels/ops/elementwise/list.h"
#include "kernels/ops/elementwise/math.h"
#include "kernels/ops/elementwise/args.h"

namespace prism::kernels::cpu {
namespace {

template <class T, class F>
void unary_naive(const UnaryArgs<T>& a) {
  const Layout& L = a.layout;
  F f;
  if (L.ndim == 1 && L.stride[0] == 1) {  // contiguous: the common case, a plain loop
    for (int64_t i = 0; i < a.numel; ++i) a.out[i] = f(a.x[i]);
    return;
  }
  int64_t idx[kMaxDims] = {};
  int64_t off = 0;
  const int last = L.ndim - 1;
  for (int64_t i = 0; i < a.numel;) {
    // innermost dim in one tight loop
    for (int64_t j = 0; j < L.shape[last]; ++j, ++i) a.out[i] = f(a.x[off + j * L.stride[last]]);
    // advance the odometer over the outer dims
    for (int d = last - 1; d >= 0; --d) {
      off += L.stride[d];
      if (++idx[d] < L.shape[d]) break;
      off -= L.stride[d] * L.shape[d];
      idx[d] = 0;
    }
  }
}

template <class T, class F>
void binary_naive(const BinaryArgs<T>& a) {
  F f;
  const int last = a.ndim - 1;
  if (a.ndim == 1 && a.a_stride[0] == 1 && a.b_stride[0] == 1) {
    for (int64_t i = 0; i < a.numel; ++i) a.out[i] = f(a.a[i], a.b[i]);
    return;
  }
  int64_t idx[kMaxDims] = {};
  int64_t oa = 0, ob = 0;
  const int64_t sa = a.a_stride[last], sb = a.b_stride[last];
  for (int64_t i = 0; i < a.numel;) {
    for (int64_t j = 0; j < a.shape[last]; ++j, ++i)
      a.out[i] = f(a.a[oa + j * sa], a.b[ob + j * sb]);
    for (int d = last - 1; d >= 0; --d) {
      oa += a.a_stride[d];
      ob += a.b_stride[d];
      if (++idx[d] < a.shape[d]) break;
      oa -= a.a_stride[d] * a.shape[d];
      ob -= a.b_stride[d] * a.shape[d];
      idx[d] = 0;
    }
  }
}

template <class F>
void add_unary(Registry& r, const char* op) {
  r.op(op, Device::cpu)
      .add<UnaryArgs>("naive", VariantTag::naive, "strided loop over the output",
                      &unary_naive<float, F>, &unary_naive<double, F>);
}

template <class F>
void add_binary(Registry& r, const char* op) {
  r.op(op, Device::cpu)
      .add<BinaryArgs>("naive", VariantTag::naive, "strided loop, broadcast by stride 0",
                       &binary_naive<float, F>, &binary_naive<double, F>);
}

}  // namespace

void register_elementwise_naive(Registry& r) {
  using namespace math;
#define PRISM_ADD_UNARY(Functor, op, flops) add_unary<Functor>(r, op);
#define PRISM_ADD_BINARY(Functor, op, flops) add_binary<Functor>(r, op);
  PRISM_UNARY_OPS(PRISM_ADD_UNARY)
  PRISM_BINARY_OPS(PRISM_ADD_BINARY)
#undef PRISM_ADD_UNARY
#undef PRISM_ADD_BINARY
}
PRISM_CPU_KERNELS(10, register_elementwise_naive);

}  // namespace prism::kernels::cpu
