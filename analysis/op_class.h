// Op classes: the coarse groups a time split is read in (where did the step go: matmuls,
// convolutions, attention, normalisation, pooling, elementwise, data movement, the optimizer).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "kernels/op_def.h"
#include "profiler/session.h"

namespace prism::analysis {

// The classes are the op definitions' (kernels/op_def.h): each op's definition names its class.
using kernels::kNumOpClasses;
using kernels::op_class_name;
using kernels::OpClass;

// The class of one op record: the optimizer phase wins (an add inside SGD is optimizer time),
// then the op's definition; an op with none (a learner's test op) is elementwise.
OpClass classify_op(std::string_view op, profiler::Phase phase);

// Self time of a profile's op records by class, in ns (scope records carry no self time).
std::array<int64_t, kNumOpClasses> time_by_class(const profiler::Profile& p);

}  // namespace prism::analysis
