// An op's definition: the one place that says what an op is, beside its kernels in its own
// folder (kernels/ops/<op>/op.h). Everything that used to keep a list of ops by name reads the
// definitions instead: the defaults the registry sets, the cost formula `prism ops` prints and
// docs/COSTS.md's table, the op class a profile's time is grouped by.
//
//   inline constexpr OpDef rms_norm{
//       .name = "rms_norm",
//       .op_class = OpClass::normalisation,
//       .cost_formula = "3 FLOPs per element (+1 with weight) + 4 per row; bytes = ...",
//       .cpu = {"fused", "one pass over each row where naive makes a pass per step (...)"},
//   };
//
// The front end names its op by the definition (detail::OpHandle op(kernels::ops::rms_norm)),
// never by a string, and the folder's op.cpp adds the definitions to the list
// (PRISM_OP_DEFS(ops::rms_norm, ops::rms_norm_backward)). The cost arithmetic itself is in
// kernels/costs.h; the formula here says the same for a reader.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "kernels/types.h"

namespace prism::kernels {

// The coarse groups a time split is read in (where did the step go).
enum class OpClass : uint8_t {
  matmul,         // matmul and its lower-precision and fused forms (linear, linear_gelu)
  conv,           // conv2d, its two gradients, and the unfolding (im2col, col2im)
  attention,      // fused attention forward and backward
  normalisation,  // layer norm, RMSNorm, softmax, log-softmax, cross-entropy (a normalised
                  // log-likelihood)
  pooling,        // max / average pooling and their gradients
  elementwise,    // activations (SwiGLU's gate too), arithmetic, reductions, copies, indexing
  data,           // host <-> device copies (to_cuda, to_cpu)
  optimizer,      // the parameter updates (and every op of the optimizer phase)
};
inline constexpr int kNumOpClasses = 8;
const char* op_class_name(OpClass c);

// The variant an op runs on one device when nothing else is chosen, and why that one: the
// measured reason in words, with the docs/PERFORMANCE.md section that has the figures (figures
// are dated there, so they are never restated here). A null variant: the first one registered.
struct DefaultVariant {
  const char* variant = nullptr;
  const char* why = "";
  // Where `variant` needs hardware this machine lacks (it reports what runs instead:
  // KernelEntry::runs_instead), the default is this one, so that the default is what runs.
  const char* without_its_hardware = nullptr;
};

struct OpDef {
  const char* name = "";
  OpClass op_class = OpClass::elementwise;
  const char* cost_formula = "";  // in words, one line (`prism ops`, docs/COSTS.md)
  DefaultVariant cpu{};
  DefaultVariant cuda{};
  // false: an op the profiler records that runs no registered kernel (a host <-> device copy is
  // the runtime's memcpy); it has a class and a cost, and no variants.
  bool has_kernels = true;

  const DefaultVariant& default_on(Device d) const { return d == Device::cuda ? cuda : cpu; }
};

// Every definition, sorted by name.
const std::vector<const OpDef*>& op_defs();
// By name; nullptr for a name no definition has (a learner's op in a test).
const OpDef* find_op_def(std::string_view name);

// Adds definitions to the list; made by PRISM_OP_DEFS at namespace scope in an op's op.cpp.
// Two definitions of one name are a programming error, reported when the list is first read.
struct OpDefsFile {
  OpDefsFile(std::initializer_list<std::reference_wrapper<const OpDef>> defs);
};

}  // namespace prism::kernels

#define PRISM_OP_DEFS_CONCAT_INNER(a, b) a##b
#define PRISM_OP_DEFS_CONCAT(a, b) PRISM_OP_DEFS_CONCAT_INNER(a, b)
// PRISM_OP_DEFS(ops::softmax, ops::softmax_backward): the definitions one folder adds.
#define PRISM_OP_DEFS(...)                                                       \
  static const ::prism::kernels::OpDefsFile PRISM_OP_DEFS_CONCAT(prism_op_defs_, \
                                                                 __COUNTER__)({__VA_ARGS__})
