// Data sets: numbered examples, and the fast path that stacks many of them into one batch.
//
// A Dataset answers two questions: how many examples it has (`size()`) and what example i is
// (`get(i)`, an input and a target). A model trains on batches, not examples, so a Dataset
// also fills a whole batch at once (`fill_batch`): straight into the memory of two stacked
// tensors, input [B, ...] and target [B, ...], with one memcpy per example and no tensor per
// example. `get_batch` wraps it for direct use; the DataLoader (loader.h) calls `fill_batch`,
// possibly from its prefetch thread.
//
//   TensorDataset train(images, labels);          // images [N,1,28,28] f32, labels [N] i64
//   Example e = train.get(0);                     // views: input [1,28,28], target [] int64
//   Batch b = train.get_batch({3, 1, 4, 1, 5});   // input [5,1,28,28], target [5]
//
// Thread safety: `size`, `spec`, `get` and `fill_batch` are const and may be called from a
// loader thread while the caller's thread uses the data set too; a data set that needs
// randomness per example must own its Generator (never prism::default_generator()).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace prism::nn::data {

// One example: for a classifier, an input tensor and a 0-dim int64 class label.
struct Example {
  Tensor input;
  Tensor target;
};

// Examples stacked along a new first dim: input [B, ...], target [B, ...].
struct Batch {
  Tensor input;
  Tensor target;
  int64_t size() const { return input.defined() ? input.size(0) : 0; }
};

// The shape and dtype of one example's input and target (without the batch dim).
struct ExampleSpec {
  Dims input_shape;
  DType input_dtype = DType::f32;
  Dims target_shape;  // [] for a class label
  DType target_dtype = DType::i64;

  int64_t input_bytes() const { return input_shape.numel() * dtype_size(input_dtype); }
  int64_t target_bytes() const { return target_shape.numel() * dtype_size(target_dtype); }
  // [batch, input_shape...] and [batch, target_shape...].
  Dims batch_input_shape(int64_t batch) const;
  Dims batch_target_shape(int64_t batch) const;
  std::string str() const;  // "input [1,28,28] float32, target [] int64"
};

class Dataset {
 public:
  virtual ~Dataset() = default;

  virtual int64_t size() const = 0;
  // Example i, 0 <= i < size(); an Error naming the index otherwise.
  virtual Example get(int64_t i) const = 0;

  // What every example looks like. The default asks get(0); a data set whose examples differ
  // in shape cannot be batched (fill_batch reports the first example that does not match).
  virtual ExampleSpec spec() const;

  // Writes examples indices[0..B) into contiguous buffers laid out as spec() says:
  // `input` holds B * spec().input_bytes() bytes, `target` B * spec().target_bytes().
  // The default calls get(i) per example and copies (any strides, converting the dtype);
  // data sets that hold their examples in memory override it with plain memcpy.
  // Called from the loader's prefetch thread: it must not allocate tensors through ops
  // (see loader.h) and must not touch the global random generator.
  virtual void fill_batch(std::span<const int64_t> indices, void* input, void* target) const;

  // The examples at `indices` stacked into fresh tensors tagged MemRole::data.
  Batch get_batch(std::span<const int64_t> indices) const;
  Batch get_batch(std::initializer_list<int64_t> indices) const {
    return get_batch(std::span<const int64_t>(indices.begin(), indices.size()));
  }

 protected:
  // Throws a prism::Error "<what>: index i out of range for a data set of n examples".
  void check_index(const char* what, int64_t i) const;
};

// A data set over tensors already in memory: inputs [N, ...] and targets [N, ...] (for a
// classifier, images [N, ...] float32 and labels [N] int64). Any dtypes are accepted; both are
// made contiguous once, here. get(i) returns views (no copy); fill_batch copies rows.
class TensorDataset : public Dataset {
 public:
  TensorDataset() = default;
  TensorDataset(Tensor inputs, Tensor targets);

  int64_t size() const override { return inputs_.defined() ? inputs_.size(0) : 0; }
  Example get(int64_t i) const override;
  ExampleSpec spec() const override { return spec_; }
  void fill_batch(std::span<const int64_t> indices, void* input, void* target) const override;

  const Tensor& inputs() const { return inputs_; }
  const Tensor& targets() const { return targets_; }

 private:
  Tensor inputs_, targets_;
  ExampleSpec spec_;
};

// An uninitialised contiguous CPU tensor tagged MemRole::data, straight from Storage::allocate:
// it records no op (the memory tracker still counts it). Every tensor this library makes for
// data goes through here.
Tensor make_data_tensor(const Dims& shape, DType dtype);

// Copies any-strided `src` into contiguous memory at `dst`, converting to `dst_dtype`, without
// ops (safe on a loader thread). Used by Dataset::fill_batch's default.
void copy_to_buffer(const Tensor& src, void* dst, DType dst_dtype);

}  // namespace prism::nn::data
