#include "analysis/op_class.h"

#include "profiler/aggregate.h"

namespace prism::analysis {

OpClass classify_op(std::string_view op, profiler::Phase phase) {
  if (phase == profiler::Phase::optimizer) return OpClass::optimizer;
  const kernels::OpDef* d = kernels::find_op_def(op);
  return d ? d->op_class : OpClass::elementwise;
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
