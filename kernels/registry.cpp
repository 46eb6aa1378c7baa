#include "kernels/registry.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

#include "kernels/gpu_runtime.h"
#include "kernels/kernel_files.h"

namespace prism::kernels {

namespace {

std::string list_names(const OpKernels& k) {
  std::string s;
  for (const auto& e : k.entries()) s += (s.empty() ? "" : ", ") + e.name;
  return s;
}

// The tags whose names also pick a variant (OpKernels::find): the one variant with that tag.
constexpr VariantTag kAliasTags[] = {VariantTag::naive, VariantTag::reference, VariantTag::user};

// Why a tag's name ("user", "naive", "reference") picked no variant of the op on the devices
// `ks`, as a sentence naming the candidates: several variants have the tag, so the tag alone
// does not say which; or, for "user", no learner kernel is registered at all. "" when `name` is
// no tag's name or there is nothing more to say than the list of variants.
std::string tag_problem(const std::vector<const OpKernels*>& ks, std::string_view name) {
  const auto tag = std::find_if(std::begin(kAliasTags), std::end(kAliasTags),
                                [&](VariantTag t) { return name == tag_name(t); });
  if (tag == std::end(kAliasTags)) return "";
  std::string out;
  int tagged = 0;  // on every device
  for (const OpKernels* k : ks) {
    std::string names;
    int n = 0;
    for (const auto& e : k->entries()) {
      if (e.tag != *tag) continue;
      names += (names.empty() ? "" : ", ") + e.name;
      ++n;
    }
    tagged += n;
    if (n > 1 && !k->find(name)) {
      out += (out.empty() ? "" : "; ") + ("'" + std::string(name) + "' is ambiguous on ") +
             device_name(k->device()) + ": " + std::to_string(n) + " variants are tagged " +
             std::string(name) + " (" + names + "), name one";
    }
  }
  if (tagged == 0 && *tag == VariantTag::user && !ks.empty()) {
    out = "no user kernel is registered for " + ks.front()->op() +
          " ('user' picks the one kernel registered with PRISM_REGISTER_KERNEL)";
  }
  return out;
}

// Scoped overrides on this thread, innermost last. Usually empty, so select() is one branch.
// Kept by name, not by entry: an op registered inside the scope (a CUDA op, when the backend is
// loaded there) obeys the guard too.
struct ScopedChoice {
  std::string op, variant;
};
thread_local std::vector<ScopedChoice> t_scoped;

// The process-wide choices by name ([0]: set_variant, [1]: PRISM_KERNELS), for ops registered
// after they were made (reapply_kernel_choices).
struct RecordedChoices {
  std::mutex mu;
  std::map<std::string, std::string, std::less<>> by_op[2];
};

RecordedChoices& recorded_choices() {
  static auto* c = new RecordedChoices;  // never destroyed, like the registry
  return *c;
}

}  // namespace

OpKernels::OpKernels(std::string op, Device device) : op_(std::move(op)), device_(device) {}

KernelEntry& OpKernels::add_entry(KernelEntry e) {
  const bool taken = std::any_of(entries_.begin(), entries_.end(),
                                 [&](const KernelEntry& other) { return other.name == e.name; });
  if (taken) {
    throw Error(op_ + ": a kernel variant named '" + e.name + "' is already registered");
  }
  if (!entries_.empty() && entries_.front().args_type != e.args_type) {
    throw Error(op_ + ": kernel '" + e.name +
                "' takes a different argument struct than the op's other kernels");
  }
  if (!e.has(DType::f32) && !e.has(DType::f64) && !e.has(DType::i64)) {
    throw Error(op_ + ": kernel '" + e.name + "' has no function");
  }
  entries_.push_back(std::move(e));
  return entries_.back();
}

void OpKernels::set_default(std::string_view name) {
  const KernelEntry& e = at(name);
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (&entries_[i] == &e) default_ = i;
  }
}

const KernelEntry& OpKernels::default_entry() const {
  if (entries_.empty()) throw Error(op_ + ": no kernel registered on " + device_name(device_));
  return entries_[default_];
}

const KernelEntry* OpKernels::find(std::string_view name) const {
  for (const auto& e : entries_) {
    if (e.name == name) return &e;
  }
  // The canonical names: "naive" and "reference" also name the variant with that tag, so
  // `--kernel cross_entropy=naive` runs "composed" and `--kernel X=naive` works for every op;
  // "user" names a learner's kernel (PRISM_REGISTER_KERNEL) without repeating its function name.
  const KernelEntry* tagged = nullptr;
  for (VariantTag tag : kAliasTags) {
    if (name != tag_name(tag)) continue;
    for (const auto& e : entries_) {
      if (e.tag != tag) continue;
      if (tagged) return nullptr;  // two of them: the tag alone does not say which
      tagged = &e;
    }
  }
  return tagged;
}

const KernelEntry& OpKernels::at(std::string_view name) const {
  const KernelEntry* e = find(name);
  if (!e) {
    const std::string why = tag_problem({this}, name);
    throw Error(op_ + ": no kernel variant named '" + std::string(name) + "' on " +
                device_name(device_) + " (variants: " + list_names(*this) + ")" +
                (why.empty() ? "" : "; " + why));
  }
  return *e;
}

const KernelEntry& OpKernels::chosen() const {
  for (auto it = t_scoped.rbegin(); it != t_scoped.rend(); ++it) {
    if (it->op != op_) continue;
    // A device without the guard's variant looks further out, as if the guard were not there.
    if (const KernelEntry* e = find(it->variant)) return *e;
  }
  if (global_choice_ >= 0) return entries_[static_cast<size_t>(global_choice_)];
  if (env_choice_ >= 0) return entries_[static_cast<size_t>(env_choice_)];
  return default_entry();
}

const KernelEntry& OpKernels::select(DType t) const {
  const KernelEntry& e = chosen();
  if (e.has(t)) return e;
  const KernelEntry& d = default_entry();
  if (d.has(t)) return d;
  for (const auto& other : entries_) {
    if (other.has(t)) return other;
  }
  throw Error(op_ + ": no kernel for dtype " + dtype_name(t) + " on " + device_name(device_));
}

namespace {

// The op's kernels on a device in `ops`, or nullptr: the one lookup behind op (which adds what is
// missing), find (const) and set_defaults (which changes the op's default). The caller holds the
// registry's lock.
template <class Ops>
auto find_in(Ops& ops, std::string_view name, Device device) -> decltype(&ops.front()) {
  for (auto& k : ops) {
    if (k.op() == name && k.device() == device) return &k;
  }
  return nullptr;
}

}  // namespace

OpKernels& Registry::op(std::string_view name, Device device) {
  std::lock_guard lock(mu_);
  if (OpKernels* k = find_in(ops_, name, device)) return *k;
  return ops_.emplace_back(std::string(name), device);
}

const OpKernels* Registry::find(std::string_view name, Device device) const {
  std::lock_guard lock(mu_);
  return find_in(ops_, name, device);
}

const OpKernels& Registry::at(std::string_view name, Device device) const {
  if (const OpKernels* k = find(name, device)) return *k;
  std::string names;
  for (const OpKernels* k : all()) {
    if (k->device() == device) names += (names.empty() ? "" : ", ") + k->op();
  }
  throw Error("no op named '" + std::string(name) + "' on " + device_name(device) +
              " (ops: " + names + ")");
}

std::vector<const OpKernels*> Registry::all() const {
  std::vector<const OpKernels*> out;
  {
    std::lock_guard lock(mu_);
    for (const auto& k : ops_) out.push_back(&k);
  }
  std::sort(out.begin(), out.end(), [](const OpKernels* a, const OpKernels* b) {
    return a->op() != b->op() ? a->op() < b->op() : a->device() < b->device();
  });
  return out;
}

void Registry::set_defaults(Device device, const std::vector<const OpDef*>& defs) {
  for (const OpDef* d : defs) {
    const DefaultVariant& dv = d->default_on(device);
    if (!dv.variant) continue;  // the first variant registered
    OpKernels* k = nullptr;
    {
      std::lock_guard lock(mu_);
      k = find_in(ops_, d->name, device);
    }
    if (!k) continue;  // an op this device does not run (linear on the GPU)
    if (!k->find(dv.variant)) {
      throw Error(std::string(d->name) + "'s definition makes '" + dv.variant + "' its " +
                  device_name(device) + " default, and no such variant is registered (" +
                  list_names(*k) + ")");
    }
    k->set_default(dv.variant);
    // A variant that hands its calls to another where this machine lacks its hardware (AMX)
    // is not the default here: the one it hands over to is.
    if (dv.without_its_hardware && !k->default_entry().runs_instead_note().empty()) {
      k->set_default(dv.without_its_hardware);
    }
  }
}

const KernelEntry& meta_entry() {
  static const KernelEntry e = [] {
    KernelEntry k;
    k.name = "meta";
    k.tag = VariantTag::reference;
    k.idea = "shapes only: no data, no compute";
    k.meta = true;
    return k;
  }();
  return e;
}

Registry& registry() {
  static Registry* r = [] {
    auto* reg = new Registry();  // never destroyed: kernels may run during static teardown
    // Every built-in CPU kernel (each file registers itself: kernels/kernel_files.h), then each
    // op's default from its definition. The CUDA kernels join when the backend library is
    // loaded, on first GPU use (kernels/gpu_loader.cpp), so that a CPU run never maps cudart.
    cpu_kernel_files().register_all(*reg);
    reg->set_defaults(Device::cpu);
    return reg;
  }();
  return *r;
}

namespace {

// The op on every device that has registered it (none: empty).
std::vector<OpKernels*> find_op(std::string_view op) {
  std::vector<OpKernels*> out;
  Registry& r = registry();
  for (Device d : {Device::cpu, Device::cuda}) {
    if (const OpKernels* k = r.find(op, d)) out.push_back(const_cast<OpKernels*>(k));
  }
  return out;
}

// True if some of `ks` has `variant` ("": if there is any).
bool has_variant(const std::vector<OpKernels*>& ks, std::string_view variant) {
  for (const OpKernels* k : ks) {
    if (variant.empty() || k->find(variant)) return true;
  }
  return false;
}

// The op on every device that has registered it, checked to have `variant` ("": any) on at
// least one. A name the loaded devices do not know may be a CUDA one (matmul's "tiled", named by
// --kernel before any GPU use), so the CUDA backend is loaded, if this build has it, before the
// name is declared unknown. Throws an Error listing the ops or variants that exist.
std::vector<OpKernels*> resolve(std::string_view op, std::string_view variant) {
  std::vector<OpKernels*> ks = find_op(op);
  if (has_variant(ks, variant)) return ks;
  if (gpu::built() && !gpu::backend_loaded() && gpu::load_backend()) ks = find_op(op);
  if (has_variant(ks, variant)) return ks;
  const std::string note = gpu::built() && !gpu::backend_loaded()
                               ? " (CUDA variants not included: " + gpu::unavailable_reason() + ")"
                               : "";
  try {
    if (ks.empty()) registry().at(op, Device::cpu);  // throws the list of ops
  } catch (const Error& e) {
    throw Error(e.what() + note);
  }
  // The variants of every device, so a name that exists only on the GPU is visible here.
  std::string m = std::string(op) + ": no kernel variant named '" + std::string(variant) + "' on ";
  for (size_t i = 0; i < ks.size(); ++i) {
    m += std::string(i ? " or " : "") + device_name(ks[i]->device()) +
         " (variants: " + list_names(*ks[i]) + ")";
  }
  const std::string why = tag_problem(std::vector<const OpKernels*>(ks.begin(), ks.end()), variant);
  throw Error(m + (why.empty() ? "" : "; " + why) + note);
}

// Applies a choice to one op's kernels: the entry's index, or -1 (the default) where this device
// has no variant of that name.
void apply_choice(OpKernels& k, std::string_view variant, bool from_env) {
  int idx = -1;
  const KernelEntry* e = variant.empty() ? nullptr : k.find(variant);  // "naive": by tag too
  for (size_t i = 0; i < k.entries().size() && e; ++i) {
    if (&k.entries()[i] == e) idx = static_cast<int>(i);
  }
  k.set_choice(idx, from_env);
}

void choose(std::string_view op, std::string_view variant, bool from_env) {
  std::vector<OpKernels*> ks = resolve(op, variant);
  RecordedChoices& c = recorded_choices();
  std::lock_guard lock(c.mu);
  auto& by_op = c.by_op[from_env ? 1 : 0];
  if (variant.empty()) {
    by_op.erase(std::string(op));
  } else {
    by_op[std::string(op)] = std::string(variant);
  }
  for (OpKernels* k : ks) apply_choice(*k, variant, from_env);  // a device without it: default
}

void parse_choices(std::string_view spec, bool from_env) {
  const std::string where = from_env ? "PRISM_KERNELS" : "kernel choice";
  // Validate everything first, then apply, so a bad entry leaves nothing half-applied.
  std::vector<std::pair<std::string, std::string>> pairs;
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t comma = spec.find(',', pos);
    std::string_view item =
        spec.substr(pos, comma == std::string_view::npos ? spec.npos : comma - pos);
    pos = comma == std::string_view::npos ? spec.size() + 1 : comma + 1;
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size()) {
      throw Error(where + ": expected op=variant, got '" + std::string(item) + "'");
    }
    std::string op(item.substr(0, eq)), variant(item.substr(eq + 1));
    (void)resolve(op, variant);  // throws for a name no device has
    pairs.emplace_back(std::move(op), std::move(variant));
  }
  for (const auto& [op, variant] : pairs) choose(op, variant, from_env);
}

}  // namespace

void set_variant(std::string_view op, std::string_view variant) {
  choose(op, variant, false);
}

void apply_kernel_choices(std::string_view spec) {
  parse_choices(spec, false);
}

void reapply_kernel_choices(Device device) {
  RecordedChoices& c = recorded_choices();
  std::lock_guard lock(c.mu);
  for (int from_env = 0; from_env < 2; ++from_env) {
    for (const auto& [op, variant] : c.by_op[from_env]) {
      if (const OpKernels* k = registry().find(op, device)) {
        apply_choice(*const_cast<OpKernels*>(k), variant, from_env == 1);
      }
    }
  }
}

void load_env_choices() {
  static std::once_flag once;
  static std::string error;
  std::call_once(once, [] {
    const char* env = std::getenv("PRISM_KERNELS");
    if (!env) return;
    try {
      parse_choices(env, true);
    } catch (const Error& e) {
      // Name the variable: this surfaces at the first op call, far from where it was set.
      const std::string what = e.what();
      const bool named = what.rfind("PRISM_KERNELS", 0) == 0;
      error = named ? what : "PRISM_KERNELS=" + std::string(env) + ": " + what;
    }
  });
  if (!error.empty()) throw Error(error);
}

Use::Use(std::string_view op, std::string_view variant) {
  // Like set_variant: every device of the op that has this variant runs it (a GPU-only variant
  // such as matmul's "tiled" leaves the cpu alone); an Error only when no device has it.
  (void)resolve(op, variant);
  t_scoped.push_back({std::string(op), std::string(variant)});
  pushed_ = 1;
}

Use::~Use() {
  t_scoped.resize(t_scoped.size() - static_cast<size_t>(pushed_));
}

namespace {

// Function-local, so it exists before the first static registrar runs.
struct RegistrationErrors {
  std::mutex mu;
  std::vector<std::string> lines;
};

RegistrationErrors& registration_error_log() {
  static RegistrationErrors log;
  return log;
}

}  // namespace

void UserKernelRegistrar::report_registration_error(const char* op, const char* name,
                                                    const char* why, bool quiet) {
  const std::string line =
      std::string("could not register kernel '") + name + "' for op '" + op + "': " + why;
  RegistrationErrors& log = registration_error_log();
  {
    std::lock_guard lock(log.mu);
    log.lines.push_back(line);
  }
  if (!quiet) std::fprintf(stderr, "prism: %s\n", line.c_str());
}

std::vector<std::string> registration_errors() {
  RegistrationErrors& log = registration_error_log();
  std::lock_guard lock(log.mu);
  return log.lines;
}

}  // namespace prism::kernels
