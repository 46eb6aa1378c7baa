// The naive max-pool forward kernel, shared with the optimized variant as its general-case
// fallback.
#pragma once

#include "kernels/ops/pool2d/args.h"
#include "kernels/cpu/parallel.h"

namespace prism::kernels::cpu {

template <class T>
void max_pool2d_naive(const Pool2dArgs<T>& args);
template <class T>
void max_pool2d_backward_naive(const Pool2dArgs<T>& args);
template <class T>
void avg_pool2d_naive(const Pool2dArgs<T>& args);
template <class T>
void avg_pool2d_backward_naive(const Pool2dArgs<T>& args);

// Runs kernel(args) on chunks of planes over the threads (kernels/cpu/parallel.h). Planes are
// independent (a window never crosses one, and backward scatters only into its own plane), so
// any split gives the same bits. `backward`: out is [planes, h, w] (dx), else [planes, ho, wo].
template <class T, class Kernel>
void over_plane_chunks(const Pool2dArgs<T>& a, bool backward, Kernel kernel) {
  const int64_t in = a.h * a.w, out = a.ho * a.wo;
  parallel_for(a.planes, rows_per_chunk(in + out), [&](int64_t p0, int64_t p1) {
    Pool2dArgs<T> part = a;
    part.planes = p1 - p0;
    if (a.x) part.x = a.x + p0 * in;
    if (a.dy) part.dy = a.dy + p0 * out;
    if (a.index) part.index = a.index + p0 * out;
    part.out = a.out + p0 * (backward ? in : out);
    kernel(part);
  });
}

}  // namespace prism::kernels::cpu
