#include "nn/kv_cache.h"

#include <string>

#include "tensor/autograd/grad_mode.h"
#include "tensor/ops.h"
#include "tensor/storage.h"

namespace prism::nn {

KVCache::KVCache(int64_t layers, int64_t batch, int64_t heads, int64_t max_len, int64_t head_dim,
                 DType dtype, Device device)
    : layers_(layers), batch_(batch), heads_(heads), max_len_(max_len), head_dim_(head_dim) {
  if (layers <= 0 || batch <= 0 || heads <= 0 || max_len <= 0 || head_dim <= 0) {
    throw Error("KVCache: layers, batch, heads, max_len and head_dim must be positive, got " +
                std::to_string(layers) + ", " + std::to_string(batch) + ", " +
                std::to_string(heads) + ", " + std::to_string(max_len) + ", " +
                std::to_string(head_dim));
  }
  // Allocated once, tagged kv_cache: the memory report shows the cache as its own role, and
  // the decoding steps after this allocate nothing for it.
  DefaultDevice on(device);
  AllocRole role(MemRole::kv_cache);
  const Dims shape{batch, heads, max_len, head_dim};
  for (int64_t i = 0; i < layers; ++i) {
    k_.push_back(zeros(shape, dtype));
    v_.push_back(zeros(shape, dtype));
  }
}

int64_t KVCache::bytes() const {
  int64_t total = 0;
  for (const auto& t : k_) total += t.nbytes();
  for (const auto& t : v_) total += t.nbytes();
  return total;
}

void KVCache::check_layer(int64_t layer, const char* what) const {
  if (layer < 0 || layer >= layers_) {
    throw Error(std::string("KVCache::") + what + ": layer " + std::to_string(layer) +
                " is outside [0, " + std::to_string(layers_) + ")");
  }
}

std::pair<Tensor, Tensor> KVCache::append(int64_t layer, const Tensor& k_new, const Tensor& v_new) {
  check_layer(layer, "append");
  const Tensor& k = k_[static_cast<size_t>(layer)];
  const Tensor& v = v_[static_cast<size_t>(layer)];
  const bool shapes_ok = k_new.dim() == 4 && k_new.shape() == v_new.shape() &&
                         k_new.size(0) == batch_ && k_new.size(1) == heads_ &&
                         k_new.size(3) == head_dim_ && k_new.size(2) >= 1;
  if (!shapes_ok) {
    throw Error("KVCache::append: keys " + k_new.shape().str() + " and values " +
                v_new.shape().str() + " must both be [" + std::to_string(batch_) + ", " +
                std::to_string(heads_) + ", n, " + std::to_string(head_dim_) + "] with n >= 1");
  }
  const int64_t n = k_new.size(2);
  if (length_ + n > max_len_) {
    throw Error("KVCache::append: " + std::to_string(n) + " new positions after " +
                std::to_string(length_) + " do not fit in max_len " + std::to_string(max_len_));
  }
  NoGrad no_grad;  // an in-place write into a buffer: inference only
  copy_into(k.narrow(2, length_, n), k_new);
  copy_into(v.narrow(2, length_, n), v_new);
  return {k.narrow(2, 0, length_ + n), v.narrow(2, 0, length_ + n)};
}

void KVCache::advance(int64_t n) {
  if (n < 0 || length_ + n > max_len_) {
    throw Error("KVCache::advance: " + std::to_string(n) + " positions after " +
                std::to_string(length_) + " do not fit in max_len " + std::to_string(max_len_));
  }
  length_ += n;
}

const Tensor& KVCache::keys(int64_t layer) const {
  check_layer(layer, "keys");
  return k_[static_cast<size_t>(layer)];
}

const Tensor& KVCache::values(int64_t layer) const {
  check_layer(layer, "values");
  return v_[static_cast<size_t>(layer)];
}

}  // namespace prism::nn
