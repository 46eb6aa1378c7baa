// Exercise 11: the one function the checker calls. Your file, attention_module.cpp, defines it.
//
// make_my_attention(d_model, heads, causal) returns multi-head self-attention as an nn::Module,
// with the same constructor arguments, the same input and output ([B, T, d_model] or
// [T, d_model]) and the same parameters as prism's own nn::MultiHeadAttention
// (nn/layers/attention.h):
//   qkv.weight  [3 d_model, d_model]    qkv.bias  [3 d_model]     (a Linear d_model -> 3 d_model)
//   proj.weight [d_model, d_model]      proj.bias [d_model]       (a Linear d_model -> d_model)
// The checker copies the built-in layer's parameters into yours by these names, so both compute
// with the same weights.
#pragma once

#include <cstdint>
#include <memory>

#include "nn/module.h"

std::shared_ptr<prism::nn::Module> make_my_attention(int64_t d_model, int64_t heads, bool causal);
