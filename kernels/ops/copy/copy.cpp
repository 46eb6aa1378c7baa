// Strided copy: the kernel behind contiguous(), concat and every copy into a view.
//
// Idea: the same odometer walk as the elementwise kernels, with a strided destination too.
// Cost: 0 FLOPs; bytes = 2 x numel x element size. It is pure data movement, which is why a
// learner should see it in the profile every time a view has to be materialised.
#include <algorithm>

#include "kernels/cpu/kernel_list.h"
#include "kernels/cpu/parallel.h"
#include "kernels/ops/copy/args.h"

namespace prism::kernels::cpu {
namespace {

template <class T>
void copy_naive(const CopyArgs<T>& a) {
  int64_t numel = 1;
  for (int d = 0; d < a.ndim; ++d) numel *= a.shape[d];
  if (numel == 0) return;
  const int last = a.ndim - 1;
  const int64_t ss = a.src_stride[last], ds = a.dst_stride[last];
  int64_t idx[kMaxDims] = {};
  int64_t os = 0, od = 0;
  for (int64_t i = 0; i < numel; i += a.shape[last]) {
    for (int64_t j = 0; j < a.shape[last]; ++j) a.dst[od + j * ds] = a.src[os + j * ss];
    for (int d = last - 1; d >= 0; --d) {
      os += a.src_stride[d];
      od += a.dst_stride[d];
      if (++idx[d] < a.shape[d]) break;
      os -= a.src_stride[d] * a.shape[d];
      od -= a.dst_stride[d] * a.shape[d];
      idx[d] = 0;
    }
  }
}

// The same walk split by innermost rows over the threads (kernels/cpu/parallel.h); a row
// whose source and destination are both contiguous is one std::copy (memmove speed), and so is
// a chunk of a copy whose source and destination are both one flat run.
template <class T>
void copy_optimized(const CopyArgs<T>& a) {
  int64_t numel = 1;
  for (int d = 0; d < a.ndim; ++d) numel *= a.shape[d];
  if (numel == 0) return;
  if (is_flat(a.ndim, a.shape, a.src_stride) && is_flat(a.ndim, a.shape, a.dst_stride)) {
    parallel_for(numel, kChunkElementwise,
                 [&](int64_t i0, int64_t i1) { std::copy(a.src + i0, a.src + i1, a.dst + i0); });
    return;
  }
  const int last = a.ndim - 1;
  const int64_t cols = a.shape[last], ss = a.src_stride[last], ds = a.dst_stride[last];
  parallel_for(numel / cols, rows_per_chunk(cols, kChunkElementwise), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T* src = a.src + row_offset(r, a.ndim, a.shape, a.src_stride);
      T* dst = a.dst + row_offset(r, a.ndim, a.shape, a.dst_stride);
      if (ss == 1 && ds == 1) {
        std::copy(src, src + cols, dst);
      } else {
        for (int64_t j = 0; j < cols; ++j) dst[j * ds] = src[j * ss];
      }
    }
  });
}

}  // namespace

void register_copy(Registry& r) {
  r.op("copy", Device::cpu)
      .add<CopyArgs>("naive", VariantTag::naive, "strided odometer walk", &copy_naive<float>,
                     &copy_naive<double>, &copy_naive<int64_t>)
      .also<CopyArgs, BFloat16>(&copy_naive<BFloat16>)
      .also<CopyArgs, int8_t>(&copy_naive<int8_t>)
      .also<CopyArgs, int32_t>(&copy_naive<int32_t>);
  r.op("copy", Device::cpu)
      .add<CopyArgs>("optimized", VariantTag::optimized, "innermost rows over threads",
                     &copy_optimized<float>, &copy_optimized<double>, &copy_optimized<int64_t>)
      .also<CopyArgs, BFloat16>(&copy_optimized<BFloat16>)
      .also<CopyArgs, int8_t>(&copy_optimized<int8_t>)
      .also<CopyArgs, int32_t>(&copy_optimized<int32_t>);
}
PRISM_CPU_KERNELS(20, register_copy);

}  // namespace prism::kernels::cpu
