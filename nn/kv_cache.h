// KVCache: the keys and values a decoder-only transformer has already computed, kept between
// decoding steps.
//
// Why. Generating token t+1 with the plain forward reruns the model over all t positions of the
// context: every layer recomputes t rows of q, k, v and a t x t causal attention, about
// 2 P t + 2 L t^2 D FLOPs per new token (P the parameters in the blocks, L layers, D d_model),
// so a whole generation of T tokens costs O(T^3) in attention. But with causal attention the
// key and value of position j depend only on tokens 0..j: they do not change when later tokens
// arrive. Keeping them, a step computes only the new token's row: 2 P + 4 L t D FLOPs, its
// attention one query against t cached keys. Per token the cost drops from O(t^2) to O(t).
//
// What it costs: memory. Per layer one key and one value buffer [B, H, max_len, d] (H d = D):
//   bytes = 2 * layers * batch * heads * max_len * head_dim * element size
// (gpt-char at context 1024, fp32: 2 * 4 * 1 * 4 * 1024 * 32 * 4 = 4 MiB; GPT-2 small at 1024:
// 72 MiB per sequence). The buffers are allocated ONCE, at the maximum length, under the
// memory tracker's kv_cache role, so `prism generate` and the profile show them as their own
// line, and filling them allocates nothing: position by position, rows are copied in place
// (op "copy_into").
//
// Use (nn/models/gpt.h, GPT::forward_cached, does all of this):
//   KVCache cache = model.make_cache(/*batch=*/1, /*max_len=*/256);
//   logits = model.forward_cached(prompt_ids, cache);   // prefill: positions [0, n)
//   logits = model.forward_cached(next_id, cache);      // one position more, O(t) work
// Each layer calls append() with its new rows; the model calls advance() once all layers have.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "tensor/tensor.h"

namespace prism::nn {

class KVCache {
 public:
  // Allocates the 2 * layers buffers [batch, heads, max_len, head_dim] of `dtype` on `device`
  // (zeros: a row never written is never read). Every size must be positive.
  KVCache(int64_t layers, int64_t batch, int64_t heads, int64_t max_len, int64_t head_dim,
          DType dtype = DType::f32, Device device = Device::cpu);

  int64_t layers() const { return layers_; }
  int64_t batch() const { return batch_; }
  int64_t heads() const { return heads_; }
  int64_t max_len() const { return max_len_; }
  int64_t head_dim() const { return head_dim_; }
  // Positions filled so far (the next new token goes to position length()).
  int64_t length() const { return length_; }
  // 2 * layers * batch * heads * max_len * head_dim * element size: what the buffers hold.
  int64_t bytes() const;

  // Writes k_new and v_new [batch, heads, n, head_dim] at positions [length(), length() + n) of
  // `layer` and returns views [batch, heads, length() + n, head_dim] of everything cached for
  // that layer, the new rows included. An Error if the shapes disagree or the rows do not fit.
  std::pair<Tensor, Tensor> append(int64_t layer, const Tensor& k_new, const Tensor& v_new);
  // Marks n more positions filled, once every layer has appended them.
  void advance(int64_t n);
  // Forgets every position (length 0); the buffers stay allocated for the next sequence.
  void clear() { length_ = 0; }

  const Tensor& keys(int64_t layer) const;    // the whole buffer [B, H, max_len, d]
  const Tensor& values(int64_t layer) const;  // the whole buffer [B, H, max_len, d]

 private:
  void check_layer(int64_t layer, const char* what) const;

  int64_t layers_, batch_, heads_, max_len_, head_dim_;
  int64_t length_ = 0;
  std::vector<Tensor> k_, v_;
};

}  // namespace prism::nn
