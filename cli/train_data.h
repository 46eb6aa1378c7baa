// What `prism train --data` names: a built-in data set or a path, resolved into a training
// set, a held-out set and the kind of task they pose.
#pragma once

#include <memory>
#include <string>

#include "nn/data/dataset.h"
#include "nn/data/text.h"
#include "nn/models/zoo.h"

namespace prism::cli {

enum class Task {
  classify,   // input [B, ...] float32, label [B] int64: cross-entropy on logits [B, C]
  next_char,  // input [B, T] int64, target [B, T] int64: cross-entropy on logits [B, T, V]
};

struct TrainData {
  std::string name;  // what the user sees: "fashion-mnist (/usr/share/...)", "shapes (generated)"
  Task task = Task::classify;
  std::shared_ptr<nn::data::Dataset> train;
  std::shared_ptr<nn::data::Dataset> test;
  int64_t num_classes = 0;  // classify: classes; next_char: vocabulary size
  // next_char only: the training text's data set (vocabulary, decoding) and its entropy.
  std::shared_ptr<nn::data::CharDataset> text;
  double unigram_entropy_nats = 0;
};

// `spec` is "fashion-mnist", "shapes", "spirals", "text", a directory of MNIST-format IDX files,
// or a text file; "" picks the model's natural default (Fashion-MNIST when the Debian package
// is installed, else generated shapes; the built-in text for transformers). `block_size` is the
// context length for text. Unknown names and unreadable paths are Errors.
TrainData load_train_data(const std::string& spec, const std::string& model, int64_t block_size,
                          uint64_t seed);

// The model options `data` implies for `model`: its classes and image shape, or its vocabulary
// (other fields of `base` are kept). A model that cannot read the data (a CNN on text, a GPT on
// images) is a UsageError saying which data it needs.
nn::ModelOptions model_options_for(const TrainData& data, const std::string& model,
                                   nn::ModelOptions base);

}  // namespace prism::cli
