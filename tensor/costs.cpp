#include "tensor/costs.h"

#include <algorithm>

namespace prism::costs {

Cost elementwise(const Dims& out, int flops_per_elem, int64_t in_bytes, int64_t elem_size) {
  const int64_t n = out.numel();
  return {n * flops_per_elem, 0, in_bytes + n * elem_size};
}

Cost matmul(const Dims& a, const Dims& b, int64_t elem_size) {
  // a: [..., m, k], b: [..., k, n]; the batch is the product of the broadcast batch dims.
  const int64_t m = a[a.size() - 2], k = a.back(), n = b.back();
  int64_t batch = 1;
  const int na = a.size() - 2, nb = b.size() - 2, nbatch = std::max(na, nb);
  for (int i = 0; i < nbatch; ++i) {
    int ia = na - nbatch + i, ib = nb - nbatch + i;
    batch *= std::max(ia >= 0 ? a[ia] : 1, ib >= 0 ? b[ib] : 1);
  }
  const int64_t macs = batch * m * n * k;
  return {2 * macs, macs, (a.numel() + b.numel() + batch * m * n) * elem_size};
}

Cost reduce(int64_t in_numel, int64_t out_numel, int64_t elem_size, int64_t out_elem_size) {
  return {std::max<int64_t>(in_numel - out_numel, 0), 0,
          in_numel * elem_size + out_numel * out_elem_size};
}

Cost softmax(int64_t numel, int64_t elem_size) { return {4 * numel, 0, 2 * numel * elem_size}; }

Cost softmax_backward(int64_t numel, int64_t elem_size) {
  return {4 * numel, 0, 3 * numel * elem_size};
}

Cost copy(int64_t numel, int64_t elem_size) { return {0, 0, 2 * numel * elem_size}; }

}  // namespace prism::costs
