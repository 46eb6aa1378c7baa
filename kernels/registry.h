// The kernel registry: for every (op, device), the variants that can run it, and which one runs.
//
// A kernel is a plain function on raw buffers, `void k(const Args<T>&)`, where Args is the op's
// argument struct from its args.h (pointers, sizes, strides; never a Tensor). One entry holds the
// instantiations a variant provides, one slot per dtype (any may be missing): float32, float64
// and int64 through add(), the others (bfloat16, int8, int32) through also().
//
// Which variant runs, highest priority first:
//   1. a scoped override on this thread:  kernels::Use guard("matmul", "naive");
//   2. a process-wide choice:             kernels::set_variant("matmul", "naive")  (--kernel)
//   3. the environment:                   PRISM_KERNELS=matmul=naive,softmax=reference
//   4. the op's default (the fastest correct variant registered).
// If the chosen variant lacks the dtype at hand (a learner's float32-only kernel asked for a
// float64 gradient check), the default variant runs instead and the profile says so.
//
// The CUDA kernels are registered later than the CPU ones: when the CUDA backend library is
// loaded, on first GPU use (kernels/gpu_runtime.h). Choices are therefore kept by name and
// applied to the CUDA ops when they arrive, and a name no loaded device has (matmul's GPU-only
// "tiled") loads the backend before it is declared unknown.
//
// A learner adds a kernel from their own file, no framework edits:
//   void my_matmul(const prism::kernels::MatmulArgs<float>& a) { ... }
//   PRISM_REGISTER_KERNEL(matmul, my_matmul);
// and chooses it by its name (`--kernel matmul=my_matmul`) or by its tag (`--kernel matmul=user`,
// when it is the op's only user kernel).
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <typeindex>
#include <vector>

#include "kernels/bfloat16.h"
#include "kernels/op_def.h"
#include "kernels/types.h"
#include "kernels/variant.h"

namespace prism::kernels {

struct KernelEntry {
  std::string name;  // "naive", "reference", "my_matmul", ...
  VariantTag tag = VariantTag::naive;
  std::string idea;  // one line: what this variant does differently
  std::type_index args_type = typeid(void);
  using ErasedFn = void (*)();
  ErasedFn fn[kDTypeCount] = {};  // indexed by DType

  bool meta = false;  // the stand-in for meta tensors: every kernel it hands out does nothing

  // A variant that needs hardware this machine may lack (AMX tiles) hands each call to another
  // variant where it is absent. Then this says what runs instead and why ("this CPU has no AMX
  // ...: each call runs 'optimized'"), and "" where the variant runs as itself; nullptr: it
  // never hands over. The lab and `prism ops` print it, so that a time is never credited to a
  // variant that did not run.
  std::string (*runs_instead)() = nullptr;
  std::string runs_instead_note() const { return runs_instead ? runs_instead() : ""; }

  bool has(DType t) const { return meta || fn[static_cast<int>(t)] != nullptr; }

  // The typed kernel for element type T; the Args family is checked against registration.
  template <template <class> class Args, class T>
  void (*get() const)(const Args<T>&);

  // Adds the instantiation for one more element type, e.g. a bfloat16 kernel:
  //   r.op("copy", Device::cpu).add<CopyArgs>(...).also<CopyArgs, BFloat16>(&copy<BFloat16>);
  template <template <class> class Args, class T>
  KernelEntry& also(void (*f)(const Args<T>&));
};

template <class T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<float>() {
  return DType::f32;
}
template <>
constexpr DType dtype_of<double>() {
  return DType::f64;
}
template <>
constexpr DType dtype_of<int64_t>() {
  return DType::i64;
}
template <>
constexpr DType dtype_of<BFloat16>() {
  return DType::bf16;
}
template <>
constexpr DType dtype_of<int8_t>() {
  return DType::i8;
}
template <>
constexpr DType dtype_of<int32_t>() {
  return DType::i32;
}

// What a meta tensor's op runs: nothing (shapes, costs and memory are the front end's work).
template <template <class> class Args, class T>
void meta_kernel(const Args<T>&) {}

template <template <class> class Args, class T>
void (*KernelEntry::get() const)(const Args<T>&) {
  if (meta) return &meta_kernel<Args, T>;
  if (args_type != std::type_index(typeid(Args<float>))) {
    throw Error("kernel '" + name + "' was registered with a different argument type");
  }
  return reinterpret_cast<void (*)(const Args<T>&)>(fn[static_cast<int>(dtype_of<T>())]);
}

template <template <class> class Args, class T>
KernelEntry& KernelEntry::also(void (*f)(const Args<T>&)) {
  if (args_type != std::type_index(typeid(Args<float>))) {
    throw Error("kernel '" + name + "' was registered with a different argument type");
  }
  fn[static_cast<int>(dtype_of<T>())] = reinterpret_cast<ErasedFn>(f);
  return *this;
}

// All variants of one op on one device.
class OpKernels {
 public:
  OpKernels(std::string op, Device device);

  const std::string& op() const { return op_; }
  Device device() const { return device_; }
  // The op's definition (kernels/op_def.h): its class, its cost formula in words, its default
  // variants; nullptr for an op with none (a learner's test op).
  const OpDef* def() const { return find_op_def(op_); }
  // The cost formula in words, for `prism ops` ("" where the op has no definition).
  const char* cost_formula() const {
    const OpDef* d = def();
    return d ? d->cost_formula : "";
  }

  template <template <class> class Args>
  KernelEntry& add(std::string name, VariantTag tag, std::string idea,
                   void (*f32)(const Args<float>&), void (*f64)(const Args<double>&) = nullptr,
                   void (*i64)(const Args<int64_t>&) = nullptr) {
    KernelEntry e;
    e.name = std::move(name);
    e.tag = tag;
    e.idea = std::move(idea);
    e.args_type = typeid(Args<float>);
    e.fn[0] = reinterpret_cast<KernelEntry::ErasedFn>(f32);
    e.fn[1] = reinterpret_cast<KernelEntry::ErasedFn>(f64);
    e.fn[2] = reinterpret_cast<KernelEntry::ErasedFn>(i64);
    return add_entry(std::move(e));
  }
  KernelEntry& add_entry(KernelEntry e);

  // Makes `name` the default (the variant run when nothing overrides it).
  void set_default(std::string_view name);
  const KernelEntry& default_entry() const;

  // By name; "naive", "reference" and "user" also find the one variant with that tag when none
  // is named so ("composed", "per_tensor", "two_pass", "unfused" are their ops' naive variants;
  // "user" is the learner's kernel, whatever its function is called). nullptr when several
  // variants have the tag: the tag alone does not say which (at() and --kernel explain).
  const KernelEntry* find(std::string_view name) const;
  // Like find, but an unknown name is an Error that lists the variants that exist.
  const KernelEntry& at(std::string_view name) const;
  const std::deque<KernelEntry>& entries() const { return entries_; }

  // The variant that runs now for dtype t, after overrides (see the top of this file).
  const KernelEntry& select(DType t) const;
  // The variant chosen before any dtype fallback (what `prism ops` reports as active).
  const KernelEntry& chosen() const;

  // Records a process-wide (set_variant) or environment (PRISM_KERNELS) choice by entry index;
  // -1 clears it. Use set_variant / apply_kernel_choices rather than calling this directly: they
  // also remember the choice by name for ops registered later (the CUDA backend's).
  void set_choice(int index, bool from_env) { (from_env ? env_choice_ : global_choice_) = index; }

 private:
  friend class Registry;
  std::string op_;
  Device device_;
  std::deque<KernelEntry> entries_;  // deque: entries never move once registered
  size_t default_ = 0;
  int global_choice_ = -1;  // set_variant / --kernel
  int env_choice_ = -1;     // PRISM_KERNELS
};

// The ops and their kernels. Lookups and registrations may come from different threads (a data
// loader's thread calling CPU ops while the main thread's first GPU use registers the CUDA
// kernels), so the list of ops is guarded; an OpKernels, once made, never moves.
class Registry {
 public:
  // The op's kernels on a device; registers the op on first use.
  OpKernels& op(std::string_view op, Device device);
  // Lookup only: nullptr if the op is not registered on that device.
  const OpKernels* find(std::string_view op, Device device) const;
  // Like find, but an unknown op is an Error listing the ops that exist.
  const OpKernels& at(std::string_view op, Device device) const;
  std::vector<const OpKernels*> all() const;  // sorted by op name, then device
  // Makes each op's default on `device` the variant its definition names (kernels/op_def.h):
  // called once a device's kernels are registered. A definition naming a variant the op lacks
  // is an Error naming both. (`defs`: the whole list but in a test.)
  void set_defaults(Device device, const std::vector<const OpDef*>& defs = op_defs());

 private:
  mutable std::mutex mu_;
  std::deque<OpKernels> ops_;
};

// The entry ops use for meta tensors (name "meta"), whatever the op.
const KernelEntry& meta_entry();

// The process-wide registry, with every built-in CPU kernel registered on first use (the CUDA
// kernels join when the backend is loaded).
Registry& registry();

// Process-wide choice of variant (what `--kernel op=variant` sets); "" restores the default.
// Applies to the op on every device that has that variant.
void set_variant(std::string_view op, std::string_view variant);

// Parses "op=variant,op=variant" (the PRISM_KERNELS syntax) and applies it with set_variant.
void apply_kernel_choices(std::string_view spec);

// Reads PRISM_KERNELS (once); a bad value throws an Error naming what exists.
void load_env_choices();

// Applies the set_variant / PRISM_KERNELS choices made so far to the ops of `device`. The CUDA
// loader calls it once it has registered the backend's kernels, which did not exist when the
// choices were made. (Use guards need nothing: they are matched by name at every call.)
void reapply_kernel_choices(Device device);

// Scoped override on this thread: the highest priority. Like set_variant it applies on every
// device that has the variant, including the CUDA ops if the backend is loaded inside the scope;
// a name no device has is an Error listing the variants.
class Use {
 public:
  Use(std::string_view op, std::string_view variant);
  ~Use();
  Use(const Use&) = delete;
  Use& operator=(const Use&) = delete;

 private:
  int pushed_ = 0;
};

// Registration helper behind PRISM_REGISTER_KERNEL (and PRISM_REGISTER_KERNEL_EXPECTING_ERROR).
struct UserKernelRegistrar {
  template <template <class> class Args>
  UserKernelRegistrar(const char* op, const char* name, void (*f32)(const Args<float>&),
                      bool quiet = false) {
    // Runs during static initialisation, where an exception would abort the program: a
    // mistake (unknown op, wrong argument type) is reported and the kernel left out.
    try {
      const OpKernels* k = registry().find(op, Device::cpu);
      if (!k) throw Error(std::string("no op named '") + op + "'");
      registry().op(op, Device::cpu).add<Args>(name, VariantTag::user, "learner kernel", f32);
    } catch (const std::exception& e) {
      report_registration_error(op, name, e.what(), quiet);
    }
  }
  // Records the mistake (registration_errors) and, unless `quiet`, prints it on stderr.
  static void report_registration_error(const char* op, const char* name, const char* why,
                                        bool quiet);
};

// Every registration mistake so far, oldest first, each as the line printed for it ("could not
// register kernel 'f' for op 'x': why"), quiet ones included.
std::vector<std::string> registration_errors();

}  // namespace prism::kernels

#define PRISM_KERNEL_CONCAT_INNER(a, b) a##b
#define PRISM_KERNEL_CONCAT(a, b) PRISM_KERNEL_CONCAT_INNER(a, b)

// Registers `fn` (float32) as a user variant of `op` on the CPU, under the function's name.
#define PRISM_REGISTER_KERNEL(op, fn)                                     \
  static const ::prism::kernels::UserKernelRegistrar PRISM_KERNEL_CONCAT( \
      prism_user_kernel_, __COUNTER__)(#op, #fn, &fn)

// For a test that registers a bad kernel on purpose: the mistake is recorded in
// registration_errors(), for the test to check, and not printed (the program's start-up, and
// so the test discovery that runs it, stays silent).
#define PRISM_REGISTER_KERNEL_EXPECTING_ERROR(op, fn)                     \
  static const ::prism::kernels::UserKernelRegistrar PRISM_KERNEL_CONCAT( \
      prism_user_kernel_, __COUNTER__)(#op, #fn, &fn, /*quiet=*/true)
