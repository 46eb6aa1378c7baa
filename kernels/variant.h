// Kernel variant tags (DESIGN.md, "Kernel variants").
#pragma once

#include <optional>
#include <string_view>

namespace prism::kernels {

enum class VariantTag {
  reference,  // the yardstick from a trusted library: Eigen on CPU, cuBLAS on CUDA
  naive,      // the clearest correct loop, the lesson's starting point
  optimized,  // blocked / packed / SIMD / threaded
  fused,      // one pass doing the work of several ops
  user,       // a learner's kernel, registered from their own file
};

inline const char* tag_name(VariantTag t) {
  switch (t) {
    case VariantTag::reference: return "reference";
    case VariantTag::naive: return "naive";
    case VariantTag::optimized: return "optimized";
    case VariantTag::fused: return "fused";
    case VariantTag::user: return "user";
  }
  return "?";
}

}  // namespace prism::kernels
