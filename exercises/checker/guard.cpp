#include "exercises/checker/guard.h"

namespace prism::exercises {

std::vector<BufferSlot> written_buffers(kernels::UnaryArgs<float>& a) {
  return {{&a.out, a.numel, "out", true}};
}

std::vector<BufferSlot> written_buffers(kernels::ReduceArgs<float>& a) {
  if (!a.out) return {};
  return {{&a.out, a.rows, "out", true}};
}

std::vector<BufferSlot> written_buffers(kernels::MatmulArgs<float>& a) {
  return {{&a.c, a.batch * a.m * a.n, "C", true}};
}

std::vector<BufferSlot> written_buffers(kernels::SoftmaxArgs<float>& a) {
  return {{&a.out, a.rows * a.cols, "out", true}};
}

std::vector<BufferSlot> written_buffers(kernels::Conv2dArgs<float>& a) {
  std::vector<BufferSlot> s = {{&a.out, a.n * a.o * a.ho * a.wo, "out", true}};
  if (a.workspace) s.push_back({&a.workspace, a.workspace_size, "workspace", false});
  return s;
}

}  // namespace prism::exercises
