// The naive row-sum kernel, shared with the optimized variant as its general-case fallback.
#pragma once

#include "kernels/ops/reduce/args.h"

namespace prism::kernels::cpu {

template <class T>
void sum_naive(const ReduceArgs<T>& args);

}  // namespace prism::kernels::cpu
