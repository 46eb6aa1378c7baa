#include "exercises/checker/guard.h"
#include "kernels/ops/attention/args.h"
#include "kernels/ops/conv2d/args.h"
#include "kernels/ops/elementwise/args.h"
#include "kernels/ops/layer_norm/args.h"
#include "kernels/ops/linear_gelu/args.h"
#include "kernels/ops/matmul/args.h"
#include "kernels/ops/reduce/args.h"
#include "kernels/ops/softmax/args.h"

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

std::vector<BufferSlot> written_buffers(kernels::LayerNormBackwardArgs<float>& a) {
  std::vector<BufferSlot> s;
  if (a.dx) s.push_back({&a.dx, a.rows * a.cols, "dx", true});
  if (a.dweight) s.push_back({&a.dweight, a.cols, "dweight", true});
  if (a.dbias) s.push_back({&a.dbias, a.cols, "dbias", true});
  return s;
}

std::vector<BufferSlot> written_buffers(kernels::LinearGeluArgs<float>& a) {
  std::vector<BufferSlot> s = {{&a.y, a.rows * a.out, "y", true}};
  if (a.z) s.push_back({&a.z, a.rows * a.out, "z", true});
  return s;
}

std::vector<BufferSlot> written_buffers(kernels::AttentionArgs<float>& a) {
  const int64_t rows = a.batch * a.heads * a.lq;
  std::vector<BufferSlot> s = {{&a.out, rows * a.d, "out", true}};
  if (a.lse) s.push_back({&a.lse, rows, "lse", true});
  if (a.workspace) s.push_back({&a.workspace, a.workspace_size, "workspace", false});
  return s;
}

}  // namespace prism::exercises
