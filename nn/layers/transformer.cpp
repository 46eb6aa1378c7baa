#include "nn/layers/transformer.h"

#include "profiler/recorder.h"
#include "tensor/ops.h"

namespace prism::nn {

TransformerBlock::TransformerBlock(int64_t d_model, int64_t heads, bool causal, int64_t mlp_ratio) {
  if (mlp_ratio <= 0) {
    throw Error("TransformerBlock: mlp_ratio must be positive, got " + std::to_string(mlp_ratio));
  }
  ln1 = register_module("ln1", std::make_shared<LayerNorm>(d_model));
  attn = register_module("attn", std::make_shared<MultiHeadAttention>(d_model, heads, causal));
  ln2 = register_module("ln2", std::make_shared<LayerNorm>(d_model));
  mlp = register_module("mlp", std::make_shared<Sequential>());
  mlp->emplace<Linear>(d_model, mlp_ratio * d_model);
  mlp->emplace<GELU>();
  mlp->emplace<Linear>(mlp_ratio * d_model, d_model);
}

Tensor TransformerBlock::run_mlp(const Tensor& x) {
  const auto fc1 = mlp->size() == 3 ? std::dynamic_pointer_cast<Linear>((*mlp)[0]) : nullptr;
  if (!fc1 || !std::dynamic_pointer_cast<GELU>((*mlp)[1])) return (*mlp)(x);
  if (x.dim() == 0 || x.size(-1) != fc1->in_features()) return (*mlp)(x);  // Linear's error
  // The scopes (*mlp)(x) and (*fc1)(x) would open, so profiles attribute the work the same way.
  profiler::Scope mlp_scope(mlp->name());
  Tensor u;
  {
    profiler::Scope fc1_scope(fc1->name());
    u = linear_gelu(x, fc1->weight, fc1->bias);
    profiler::note_scope_output(u.shape().data(), u.dim());
  }
  Tensor y = (*(*mlp)[2])(u);
  profiler::note_scope_output(y.shape().data(), y.dim());
  return y;
}

Tensor TransformerBlock::forward(const Tensor& x) {
  Tensor h = x + (*attn)((*ln1)(x));
  return h + run_mlp((*ln2)(h));
}

Tensor TransformerBlock::forward_cached(const Tensor& x, KVCache& cache, int64_t layer) {
  profiler::Scope scope(name());  // what calling the module would open
  Tensor a;
  {
    Tensor u = (*ln1)(x);
    profiler::Scope attn_scope(attn->name());
    a = attn->forward_cached(u, cache, layer);
  }
  Tensor h = x + a;
  return h + run_mlp((*ln2)(h));
}

}  // namespace prism::nn
