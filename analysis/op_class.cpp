#include "analysis/op_class.h"

#include "profiler/aggregate.h"

namespace prism::analysis {

const char* op_class_name(OpClass c) {
  switch (c) {
    case OpClass::matmul:
      return "matmul";
    case OpClass::conv:
      return "conv";
    case OpClass::attention:
      return "attention";
    case OpClass::normalisation:
      return "normalisation";
    case OpClass::pooling:
      return "pooling";
    case OpClass::elementwise:
      return "elementwise";
    case OpClass::data:
      return "data";
    case OpClass::optimizer:
      return "optimizer";
  }
  return "?";
}

namespace {
bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
}  // namespace

OpClass classify_op(std::string_view op, profiler::Phase phase) {
  if (phase == profiler::Phase::optimizer) return OpClass::optimizer;
  // matmul, the lower-precision GEMMs (matmul_bf16, matmul_int8), and the GEMMs with a
  // prologue and epilogue (linear, linear_gelu).
  if (starts_with(op, "matmul") || starts_with(op, "linear")) return OpClass::matmul;
  // im2col and col2im: the unfolding of a convolution under the bf16 policy.
  if (starts_with(op, "conv") || op == "im2col" || op == "col2im") return OpClass::conv;
  if (starts_with(op, "attention")) return OpClass::attention;
  // Only ops prism has (`prism ops`): a name here that is no op would hide one that is missing.
  if (starts_with(op, "layer_norm") || starts_with(op, "rms_norm") || starts_with(op, "softmax") ||
      starts_with(op, "log_softmax") || starts_with(op, "cross_entropy")) {
    return OpClass::normalisation;
  }
  if (starts_with(op, "max_pool") || starts_with(op, "avg_pool")) return OpClass::pooling;
  if (op == "to_cuda" || op == "to_cpu") return OpClass::data;
  if (op == "sgd_update" || op == "adam_update") return OpClass::optimizer;
  return OpClass::elementwise;
}

std::array<int64_t, kNumOpClasses> time_by_class(const profiler::Profile& p) {
  std::array<int64_t, kNumOpClasses> t{};
  const std::vector<int64_t> self = profiler::record_self_times(p);
  const auto& records = p.recording.records;
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].kind != profiler::Kind::op) continue;
    t[static_cast<size_t>(classify_op(records[i].op, records[i].phase))] += self[i];
  }
  return t;
}

}  // namespace prism::analysis
