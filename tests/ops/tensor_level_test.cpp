// Two checks of every op at the tensor level, on its folder's drivers (drivers.h), beside the
// variants and determinism tests of the same suite:
// - gradcheck: each driver whose output is differentiable, run in float64 on contiguous and
//   strided inputs, has the gradients of finite differences (tensor/autograd/gradcheck.h, in
//   random directions, so that a [300, 263] input costs six evaluations, not 157,800);
// - exact cost on the meta device: the same driver, forward and backward, with the meta device
//   as the default (its inputs, drivers.h, are then meta tensors of the same shapes and layouts)
//   records the same ops with the same FLOPs, MACs, bytes and allocations as on the CPU. A dry
//   run (`prism summary`, a memory estimate) is only as good as this.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/op_def.h"
#include "kernels/registry.h"
#include "profiler/session.h"
#include "tensor/autograd/gradcheck.h"
#include "tensor/autograd/node.h"
#include "tests/ops/drivers.h"
#include "tests/ops/per_op.h"

namespace prism::kernels {
namespace {

// The drivers of the ops this run checks (per_op.h), by op name.
DriverTable selected_drivers() {
  DriverTable all, selected;
  for (const auto& add : driver_files()) add(all);
  for (auto& [op, drivers] : all) {
    if (testing::op_selected(op)) selected[op] = std::move(drivers);
  }
  return selected;
}

bool is_float(DType dt) {
  return dt == DType::f32 || dt == DType::f64 || dt == DType::bf16;
}

// Whether the op's CPU kernels take `dt` (the bf16 and int8 matmuls take neither f64 nor f32).
bool cpu_takes(const std::string& op, DType dt) {
  const OpKernels* k = registry().find(op, Device::cpu);
  return k != nullptr && k->default_entry().has(dt);
}

// ---- gradcheck -------------------------------------------------------------------------------

// Whether y is, in autograd's graph, a function of `leaf`. A driver of a backward kernel runs
// backward on leaves of its own and returns their gradients: it reaches none of the inputs it
// was given, and its forward op's driver checks it.
bool depends_on(const Tensor& y, const Tensor& leaf) {
  std::vector<const autograd::Node*> todo;
  std::set<const autograd::Node*> seen;
  if (y.grad_fn()) todo.push_back(y.grad_fn().get());
  while (!todo.empty()) {
    const autograd::Node* n = todo.back();
    todo.pop_back();
    for (const autograd::Edge& e : n->next()) {
      if (e.leaf == leaf.impl_ptr()) return true;
      if (e.fn && seen.insert(e.fn.get()).second) todo.push_back(e.fn.get());
    }
  }
  return false;
}

// An optimizer step updates its inputs in place: not a function finite differences can probe.
bool differentiable(const std::string& op) {
  const OpDef* def = find_op_def(op);
  return def == nullptr || def->op_class != OpClass::optimizer;
}

TEST_CASE("every differentiable driver has the gradients of finite differences, in float64") {
  GradcheckOptions opts;
  opts.directions = 3;
  // Each input is moved by eps along a direction with entries up to 1, so a sum over up to 80k
  // elements is compared: the rounding of L (~1e-16 |L| / eps) asks a looser atol than the
  // element-wise default.
  opts.atol = 1e-5;
  int checked = 0;
  std::set<std::string> ops_checked;
  for (const auto& [op, drivers] : selected_drivers()) {
    if (!cpu_takes(op, DType::f64) || !differentiable(op)) continue;
    for (size_t c = 0; c < drivers.size(); ++c) {
      for (bool strided : {false, true}) {
        ref::Rng rng(2000 + c);
        std::vector<Tensor> leaves;
        for (const Tensor& t : drivers[c].make(DType::f64, rng, strided)) {
          leaves.push_back(t.dtype() == DType::f64 ? t.detach().set_requires_grad() : t);
        }
        // The inputs the output is a function of (none for a backward kernel's driver).
        const Tensor y = drivers[c].run(leaves);
        std::vector<Tensor> wrt;
        std::vector<size_t> where;
        for (size_t i = 0; i < leaves.size(); ++i) {
          if (leaves[i].requires_grad() && depends_on(y, leaves[i])) {
            wrt.push_back(leaves[i]), where.push_back(i);
          }
        }
        if (wrt.empty()) continue;
        // gradcheck varies the inputs it is given; the others (indices) stay as made.
        auto f = [&](const std::vector<Tensor>& x) {
          std::vector<Tensor> in = leaves;
          for (size_t k = 0; k < where.size(); ++k) in[where[k]] = x[k];
          return drivers[c].run(in);
        };
        const GradcheckResult r = gradcheck(f, wrt, opts);
        INFO((op + " case " + std::to_string(c) + (strided ? " strided" : " contiguous")));
        CHECK_MESSAGE(r.ok, r.message);
        ++checked;
        ops_checked.insert(op);
      }
    }
  }
  // Every op with a backward kernel of its own ("<op>_backward") was gradchecked through its
  // forward driver: a folder cannot pass by having only drivers that skip.
  for (const OpKernels* k : registry().all()) {
    const std::string& name = k->op();
    const std::string suffix = "_backward";
    if (k->device() != Device::cpu || name.size() <= suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    const std::string forward = name.substr(0, name.size() - suffix.size());
    if (!testing::op_selected(forward) || !cpu_takes(forward, DType::f64)) continue;
    CHECK_MESSAGE(ops_checked.count(forward) == 1,
                  "op '" << forward << "' has a backward kernel but no driver was gradchecked");
  }
  MESSAGE(checked << " drivers gradchecked on " << ops_checked.size() << " ops");
}

// ---- exact cost on the meta device ------------------------------------------------------------

// What the profile says of each op the driver ran, forward and backward, in order: every field
// a dry run predicts (not the time, the variant or the device).
std::vector<std::string> op_rows(const Driver& d, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> leaves;
  for (const Tensor& t : inputs) {
    leaves.push_back(is_float(t.dtype()) ? t.detach().set_requires_grad() : t);
  }
  profiler::Session session;
  Tensor y = d.run(leaves);
  // Backward too, where the output is a function of the inputs (a driver of a backward kernel
  // has run its own).
  if (std::any_of(leaves.begin(), leaves.end(),
                  [&](const Tensor& l) { return depends_on(y, l); })) {
    y.backward(ones_like(y));
  }
  const profiler::Profile& p = session.stop();
  std::vector<std::string> rows;
  for (const auto& r : p.recording.records) {
    if (r.kind != profiler::Kind::op) continue;
    // A record without an op definition is a factory (from_vector, ones, ...): the driver makes
    // an output gradient with values on the CPU and a shape on the meta device, the same bytes.
    std::ostringstream row;
    row << (find_op_def(r.op) != nullptr ? r.op : "(a factory)") << " " << phase_name(r.phase)
        << " " << r.grad_of << " flops " << r.cost.flops << " macs " << r.cost.macs << " bytes "
        << r.cost.bytes << " allocs " << r.allocs << " alloc_bytes " << r.alloc_bytes;
    rows.push_back(row.str());
  }
  return rows;
}

// "" when the two lists are equal, else the first row that differs, as "cpu: ... / meta: ...".
std::string first_difference(const std::vector<std::string>& cpu,
                             const std::vector<std::string>& meta) {
  for (size_t i = 0; i < std::max(cpu.size(), meta.size()); ++i) {
    const std::string a = i < cpu.size() ? cpu[i] : "(none)";
    const std::string b = i < meta.size() ? meta[i] : "(none)";
    if (a != b) return "row " + std::to_string(i) + " cpu: " + a + " / meta: " + b;
  }
  return "";
}

TEST_CASE("every driver records on the meta device exactly the costs it records on the CPU") {
  int checked = 0;
  for (const auto& [op, drivers] : selected_drivers()) {
    for (DType dt : {DType::f32, DType::f64}) {
      if (!cpu_takes(op, dt)) continue;
      for (size_t c = 0; c < drivers.size(); ++c) {
        for (bool strided : {false, true}) {
          INFO((op + " case " + std::to_string(c) + " " + dtype_name(dt) +
                (strided ? " strided" : " contiguous")));
          ref::Rng rng(3000 + c);
          const std::vector<std::string> on_cpu =
              op_rows(drivers[c], drivers[c].make(dt, rng, strided));
          // The same driver with the meta device as the default: its inputs (drivers.h) and
          // whatever it makes are meta tensors of the same shapes and layouts.
          DefaultDevice meta(Device::meta);
          ref::Rng same(3000 + c);
          const std::vector<std::string> on_meta =
              op_rows(drivers[c], drivers[c].make(dt, same, strided));
          REQUIRE(!on_cpu.empty());
          CHECK(first_difference(on_cpu, on_meta) == "");
          ++checked;
        }
      }
    }
  }
  MESSAGE(checked << " driver runs compared");
}

}  // namespace
}  // namespace prism::kernels
