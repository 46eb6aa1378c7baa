#include "nn/module.h"

#include <algorithm>
#include <sstream>
#include <unordered_set>

#include "nn/layers/checkpoint.h"
#include "profiler/recorder.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/ops.h"

namespace prism::nn {

namespace {

// 269322 -> "269,322": parameter counts are read, not parsed.
std::string with_commas(int64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  const int len = static_cast<int>(digits.size());
  for (int i = 0; i < len; ++i) {
    if (i > 0 && (len - i) % 3 == 0) out += ',';
    out += digits[static_cast<size_t>(i)];
  }
  return out;
}

// Collects (dotted name, tensor) over a module tree, skipping tensors already seen (the same
// TensorImpl reachable twice is one tensor: tied weights are one parameter).
void collect(const Module& m, const std::string& prefix, bool want_params,
             const NamedTensors& (*own)(const Module&, bool), NamedTensors& out,
             std::unordered_set<const TensorImpl*>& seen) {
  for (const auto& [name, t] : own(m, want_params)) {
    if (seen.insert(t.impl_ptr().get()).second) out.emplace_back(prefix + name, t);
  }
  for (const auto& [name, child] : m.named_children()) {
    collect(*child, prefix + name + ".", want_params, own, out, seen);
  }
}

}  // namespace

// The collectors above walk other modules' private lists through this friend of Module.
struct ModuleAccess {
  static const NamedTensors& own(const Module& m, bool params);
};

Tensor Module::operator()(const Tensor& x) {
  profiler::Scope scope(name_);
  Tensor y = checkpointed_ ? checkpoint(*this, x) : forward(x);
  // The output shape goes on the scope's record (summaries print it); free when not recording.
  if (y.defined()) profiler::note_scope_output(y.shape().data(), y.dim());
  return y;
}

void Module::set_name(std::string name) {
  if (name.empty()) throw Error("Module::set_name: the name must not be empty");
  name_ = std::move(name);
}

void Module::check_new_name(const std::string& name) const {
  if (name.empty() || name.find('.') != std::string::npos) {
    throw Error(type_name() + ": invalid name '" + name +
                "' (names are non-empty and contain no '.', which separates path parts)");
  }
  auto taken = [&](const auto& list) {
    return std::any_of(list.begin(), list.end(), [&](const auto& e) { return e.first == name; });
  };
  if (taken(params_) || taken(buffers_) || taken(children_)) {
    throw Error(type_name() + ": the name '" + name + "' is already registered");
  }
}

Tensor Module::register_parameter(const std::string& name, Tensor t) {
  check_new_name(name);
  if (!t.defined()) throw Error(type_name() + ": parameter '" + name + "' is undefined");
  if (!t.is_leaf()) t = t.detach();  // a parameter is a leaf of every graph it enters
  if (t.dtype() == DType::i64) {
    throw Error(type_name() + ": parameter '" + name + "' must be floating point, got int64");
  }
  t.set_requires_grad(true);
  t.storage()->set_role(MemRole::parameter);
  params_.emplace_back(name, t);
  return t;
}

Tensor Module::register_buffer(const std::string& name, Tensor t) {
  check_new_name(name);
  if (!t.defined()) throw Error(type_name() + ": buffer '" + name + "' is undefined");
  t = t.detach();
  t.storage()->set_role(MemRole::parameter);
  buffers_.emplace_back(name, t);
  return t;
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> m) {
  if (!m) throw Error(type_name() + ": child module '" + name + "' is null");
  if (m.get() == this) throw Error(type_name() + ": a module cannot be its own child");
  check_new_name(name);
  m->name_ = name;
  children_.emplace_back(name, std::move(m));
}

const NamedTensors& ModuleAccess::own(const Module& m, bool params) {
  return params ? m.params_ : m.buffers_;
}

NamedTensors Module::named_parameters() const {
  NamedTensors out;
  std::unordered_set<const TensorImpl*> seen;
  collect(*this, "", true, &ModuleAccess::own, out, seen);
  return out;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (auto& [name, t] : named_parameters()) out.push_back(t);
  return out;
}

NamedTensors Module::named_buffers() const {
  NamedTensors out;
  std::unordered_set<const TensorImpl*> seen;
  collect(*this, "", false, &ModuleAccess::own, out, seen);
  return out;
}

std::vector<Tensor> Module::buffers() const {
  std::vector<Tensor> out;
  for (auto& [name, t] : named_buffers()) out.push_back(t);
  return out;
}

NamedTensors Module::named_state() const {
  NamedTensors out = named_parameters();
  for (auto& nt : named_buffers()) out.push_back(std::move(nt));
  return out;
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_children() const {
  return children_;
}

std::vector<std::pair<std::string, const Module*>> Module::named_modules() const {
  std::vector<std::pair<std::string, const Module*>> out;
  walk([&](const std::string& path, const Module& m, int) { out.emplace_back(path, &m); });
  return out;
}

int64_t Module::parameter_count() const {
  int64_t n = 0;
  for (const auto& [name, t] : named_parameters()) n += t.numel();
  return n;
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [name, child] : children_) child->train(on);
}

void Module::zero_grad() {
  for (const Tensor& p : parameters()) p.zero_grad();
}

void Module::to(DType dtype) {
  if (dtype == DType::i64) throw Error(type_name() + ".to: parameters must stay floating point");
  NoGrad no_grad;
  auto convert = [&](const Tensor& t) {
    if (t.dtype() == dtype || t.dtype() == DType::i64) return;
    // Swap the impl's contents for the converted tensor's: every handle shares the impl.
    Tensor c = cast(t, dtype).contiguous();
    c.storage()->set_role(t.storage()->role());
    TensorImpl& impl = t.impl();
    impl.storage = c.storage();
    impl.shape = c.shape();
    impl.strides = c.strides();
    impl.offset = c.offset();
    impl.dtype = dtype;
    impl.grad.reset();
  };
  for (const Tensor& p : parameters()) convert(p);
  for (const Tensor& b : buffers()) convert(b);
}

void Module::to(Device device) {
  NoGrad no_grad;
  auto move = [&](const Tensor& t) {
    if (t.device() == device) return;
    Tensor moved = t.detach().to(device);
    moved.storage()->set_role(t.storage()->role());
    TensorImpl& impl = t.impl();
    impl.storage = moved.storage();
    impl.shape = moved.shape();
    impl.strides = moved.strides();
    impl.offset = moved.offset();
    impl.grad.reset();
  };
  for (const Tensor& p : parameters()) move(p);
  for (const Tensor& b : buffers()) move(b);
}

void Module::walk_impl(
    const std::string& path, int depth,
    const std::function<void(const std::string&, const Module&, int)>& visit) const {
  visit(path, *this, depth);
  for (const auto& [name, child] : children_) {
    child->walk_impl(path.empty() ? name : path + "." + name, depth + 1, visit);
  }
}

void Module::walk(
    const std::function<void(const std::string& path, const Module& m, int depth)>& visit) const {
  walk_impl("", 0, visit);
}

std::string Module::tree() const {
  // Two passes: first the left column of every line, so the counts line up in one column.
  struct Line {
    std::string left;
    int64_t params;
  };
  std::vector<Line> lines;
  walk([&](const std::string&, const Module& m, int depth) {
    std::string left(static_cast<size_t>(2 * depth), ' ');
    left += m.name() + ": " + m.type_name();
    const std::string extra = m.extra_repr();
    if (!extra.empty()) left += "(" + extra + ")";
    if (m.is_checkpointed()) left += " [checkpointed]";
    lines.push_back({left, m.parameter_count()});
  });
  size_t width = 0;
  for (const Line& l : lines) width = std::max(width, l.left.size());
  std::ostringstream os;
  for (const Line& l : lines) {
    os << l.left;
    if (l.params > 0) {
      os << std::string(width - l.left.size() + 2, ' ') << "params " << with_commas(l.params);
    }
    os << '\n';
  }
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Module& m) {
  return os << m.tree();
}

void assign(const Tensor& dst, const Tensor& src) {
  if (!dst.defined() || !src.defined()) throw Error("assign: undefined tensor");
  if (!(dst.shape() == src.shape()) || dst.dtype() != src.dtype() || dst.device() != src.device()) {
    throw Error(std::string("assign: cannot write a ") + dtype_name(src.dtype()) + " " +
                src.shape().str() + " tensor into a " + dtype_name(dst.dtype()) + " " +
                dst.shape().str() + " one");
  }
  if (!dst.is_leaf()) throw Error("assign: the destination must be a leaf tensor");
  if (src.impl_ptr() == dst.impl_ptr()) return;
  NoGrad no_grad;
  // Adopt src's buffer only if it is exactly src's data and nothing else can see it; otherwise a
  // write through dst would show through another tensor.
  const bool adoptable = src.is_contiguous() && src.offset() == 0 &&
                         src.storage()->nbytes() == src.nbytes() && src.storage().use_count() == 1;
  Tensor fresh = adoptable ? src : clone(src);
  fresh.storage()->set_role(dst.storage()->role());
  TensorImpl& impl = dst.impl();
  impl.storage = fresh.storage();
  impl.strides = fresh.strides();
  impl.offset = fresh.offset();
}

}  // namespace prism::nn
