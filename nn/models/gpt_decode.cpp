// GPT's incremental decoding path (declared in nn/models/gpt.h): the forward over new tokens
// that reads the keys and values of earlier positions from a KVCache (nn/kv_cache.h). Kept
// apart from gpt.cpp, whose forward() is what training runs and stays as it is.
#include <algorithm>
#include <string>

#include "nn/models/gpt.h"
#include "profiler/recorder.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/ops.h"

namespace prism::nn {

KVCache GPT::make_cache(int64_t batch, int64_t max_len) const {
  const int64_t len = max_len == 0 ? config_.block_size : max_len;
  if (len < 0 || len > config_.block_size) {
    throw Error("GPT::make_cache: max_len " + std::to_string(max_len) +
                " must be between 1 and block_size " + std::to_string(config_.block_size) +
                " (0 = block_size): positions beyond block_size have no embedding");
  }
  return KVCache(config_.layers, batch, config_.heads, len, config_.d_model / config_.heads,
                 wte->weight.dtype(), wte->weight.device());
}

Tensor GPT::forward_cached(const Tensor& idx, KVCache& cache, bool last_only) {
  if (idx.dtype() != DType::i64 || idx.dim() != 2) {
    throw Error(std::string("GPT::forward_cached: input must be int64 token ids [B, n], got ") +
                dtype_name(idx.dtype()) + " " + idx.shape().str());
  }
  const GPTConfig& c = config_;
  if (cache.layers() != c.layers || cache.heads() != c.heads ||
      cache.head_dim() != c.d_model / c.heads || cache.batch() != idx.size(0)) {
    throw Error("GPT::forward_cached: the cache (layers " + std::to_string(cache.layers()) +
                ", batch " + std::to_string(cache.batch()) + ", heads " +
                std::to_string(cache.heads()) + ", head_dim " + std::to_string(cache.head_dim()) +
                ") does not fit the model (" + extra_repr() + ") and input " + idx.shape().str() +
                "; make it with GPT::make_cache");
  }
  const int64_t t0 = cache.length(), n = idx.size(1);
  const int64_t limit = std::min(cache.max_len(), c.block_size);
  if (n < 1 || t0 + n > limit) {
    throw Error("GPT::forward_cached: " + std::to_string(n) + " new tokens after " +
                std::to_string(t0) + " cached positions exceed the limit " + std::to_string(limit) +
                " (min of the cache's max_len and block_size)");
  }
  NoGrad no_grad;  // inference only: the cache is written in place
  // As forward(): token + position embeddings, now at positions t0 .. t0 + n - 1 (with rope,
  // attention turns q and k from position t0 instead).
  Tensor x = (*wte)(idx);
  if (wpe) {
    Tensor pos;
    {
      DefaultDevice on(idx.device());
      pos = arange(static_cast<double>(t0), static_cast<double>(t0 + n), 1, DType::i64);
    }
    x = x + (*wpe)(pos);
  }
  x = (*drop)(x);
  {
    profiler::Scope scope(blocks->name());
    for (size_t i = 0; i < blocks->size(); ++i) {
      auto* block = dynamic_cast<TransformerBlock*>((*blocks)[i].get());
      if (block == nullptr) {
        throw Error("GPT::forward_cached: blocks." + std::to_string(i) + " is a " +
                    (*blocks)[i]->type_name() + ", not a TransformerBlock");
      }
      x = block->forward_cached(x, cache, static_cast<int64_t>(i));
    }
  }
  cache.advance(n);  // every layer has appended positions [t0, t0 + n)
  // The next token needs only the last position's logits: a prefill of n tokens then runs the
  // head (2 D V FLOPs a row, the largest product of the model) once instead of n times.
  if (last_only && n > 1) x = x.narrow(1, n - 1, 1);
  x = (*ln_f)(x);
  if (head) return (*head)(x);
  profiler::Scope scope("head");  // tied: x wte^T, as forward() computes it
  return matmul(x, wte->weight.t());
}

}  // namespace prism::nn
