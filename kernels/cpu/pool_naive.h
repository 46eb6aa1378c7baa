// The naive max-pool forward kernel, shared with the optimized variant as its general-case fallback.
#pragma once

#include "kernels/args.h"

namespace prism::kernels::cpu {

template <class T>
void max_pool2d_naive(const Pool2dArgs<T>& args);

}  // namespace prism::kernels::cpu
