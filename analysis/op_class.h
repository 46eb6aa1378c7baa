// Op classes: the coarse groups a time split is read in (where did the step go: matmuls,
// convolutions, attention, normalisation, pooling, elementwise, data movement, the optimizer).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "profiler/session.h"

namespace prism::analysis {

enum class OpClass : uint8_t {
  matmul,         // matmul, fused linear + GELU
  conv,           // conv2d and its two gradients
  attention,      // fused attention forward and backward
  normalisation,  // layer norm, RMSNorm, softmax, log-softmax, cross-entropy (a normalised
                  // log-likelihood)
  pooling,        // max / average pooling and their gradients
  elementwise,    // everything else: activations (SwiGLU's gate too), arithmetic, reductions,
                  // copies, indexing
  data,           // host <-> device copies (to_cuda, to_cpu)
  optimizer,      // every op of the optimizer phase (the parameter updates)
};
inline constexpr int kNumOpClasses = 8;
const char* op_class_name(OpClass c);

// The class of one op record: the optimizer phase wins (an add inside SGD is optimizer time),
// then the op's name.
OpClass classify_op(std::string_view op, profiler::Phase phase);

// Self time of a profile's op records by class, in ns (scope records carry no self time).
std::array<int64_t, kNumOpClasses> time_by_class(const profiler::Profile& p);

}  // namespace prism::analysis
