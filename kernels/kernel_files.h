// How a built-in kernel file joins the registry with no central list to edit. After its
// registration function, at namespace scope, a CPU file writes
//   void register_rms_norm(Registry& r) { r.op("rms_norm", Device::cpu).add<...>(...); }
//   PRISM_CPU_KERNELS(150, register_rms_norm);
// and a CUDA file the same with PRISM_CUDA_KERNELS (kernels/cuda/kernel_list.h). Static
// initialisation (when the library or the CUDA backend module is loaded) records the function in
// its device's list; the registry calls a list's functions, lowest `order` first, when it is built
// (registry() in kernels/registry.cpp) or when the loader has opened and checked the CUDA module
// (kernels/cuda/builtin_cuda.cpp), and then sets each op's default on that device from its
// definition (Registry::set_defaults; kernels/ops/<op>/op.h).
//
// `order` places a file's variants among other files' variants of the same op, the order in
// which `prism ops` and `prism lab` list them (matmul's ladder on the CPU: naive 60, reference
// 70, reordered 80, blocked 90, optimized 100); within one file, registration order. An op's
// first variant is its default unless its definition names another for that device.
#pragma once

#include <vector>

#include "kernels/registry.h"

namespace prism::kernels {

using RegisterFn = void (*)(Registry&);

class KernelFiles {
 public:
  // Records `fn`. Static initialisation order across files is not ours to choose, so a file
  // recorded after its list was run (nothing does this today) is registered at once instead.
  void add(int order, RegisterFn fn);
  // Calls every recorded function on `r`, lowest order first (stable for equal orders).
  void register_all(Registry& r);

 private:
  struct File {
    int order;
    RegisterFn fn;
  };
  std::vector<File> files_;
  Registry* registered_into_ = nullptr;
};

// The CPU kernels' list (its CUDA twin, cuda_kernel_files(), lives in the backend module). A
// function-local static, so it exists before the first file's KernelFile runs.
KernelFiles& cpu_kernel_files();

// One file's entry in a list; made by the macros below.
struct KernelFile {
  KernelFile(KernelFiles& list, int order, RegisterFn fn) { list.add(order, fn); }
};

}  // namespace prism::kernels

#define PRISM_KERNEL_FILE(list, order, fn)                                                        \
  static const ::prism::kernels::KernelFile PRISM_KERNEL_CONCAT(prism_kernel_file_, __COUNTER__)( \
      list, order, &fn)
#define PRISM_CPU_KERNELS(order, fn) \
  PRISM_KERNEL_FILE(::prism::kernels::cpu_kernel_files(), order, fn)
