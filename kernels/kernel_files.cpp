#include "kernels/kernel_files.h"

#include <algorithm>

namespace prism::kernels {

void KernelFiles::add(int order, RegisterFn fn) {
  if (registered_into_) {
    fn(*registered_into_);
    return;
  }
  files_.push_back({order, fn});
}

void KernelFiles::register_all(Registry& r) {
  std::vector<File> files = files_;
  std::stable_sort(files.begin(), files.end(),
                   [](const File& a, const File& b) { return a.order < b.order; });
  for (const File& f : files) f.fn(r);
  registered_into_ = &r;
}

KernelFiles& cpu_kernel_files() {
  static KernelFiles files;
  return files;
}

}  // namespace prism::kernels
