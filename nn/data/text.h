// Character-level text: the data of a tiny language model.
//
// The vocabulary is the set of distinct bytes of the text, sorted, so ids are stable for a given
// text and decode(encode(s)) == s. Example i of a CharDataset is the window of block_size + 1
// characters starting at position i, split into the input x = chars[i, i+T) and the target
// y = chars[i+1, i+T+1) (the next character at every position), both int64 [T].
//
//   CharDataset all = CharDataset::from_file("book.txt", 64);     // or CharDataset(text, 64)
//   auto [train, val] = all.split(0.9);                            // first 90% / last 10%
//   DataLoader loader(train, {.batch_size = 32, .shuffle = true});  // x [32,64], y [32,64]
//   Batch b = train.random_batch(32, gen);                        // windows drawn at random
//
// Entropy. unigram_entropy_nats() = -sum_c p(c) ln p(c), with p the character frequencies:
// the cross-entropy loss (in nats, as prism's losses report it) of a model that knows only how
// often each character occurs. A model that learned nothing scores ln(vocab_size); one that
// learned unigram statistics scores about this; anything lower has learned context.
// unigram_entropy_bits() is the same in bits per character (divide nats by ln 2).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nn/data/dataset.h"
#include "tensor/random.h"

namespace prism::nn::data {

class Vocabulary {
 public:
  Vocabulary() = default;
  explicit Vocabulary(std::string_view text);  // the sorted distinct bytes of `text`

  int64_t size() const { return static_cast<int64_t>(chars_.size()); }
  bool contains(unsigned char c) const { return id_[c] >= 0; }
  int64_t id(unsigned char c) const;  // an Error for a character not in the vocabulary
  char character(int64_t id) const;   // an Error for an id outside [0, size())
  const std::string& chars() const { return chars_; }

  std::vector<int64_t> encode(std::string_view text) const;
  std::string decode(const std::vector<int64_t>& ids) const;
  std::string decode(const Tensor& ids) const;  // any shape, row-major, integer-valued

 private:
  std::string chars_;
  std::array<int64_t, 256> id_ = filled_minus_one();
  static std::array<int64_t, 256> filled_minus_one() {
    std::array<int64_t, 256> a{};
    a.fill(-1);
    return a;
  }
};

class CharDataset : public Dataset {
 public:
  // The vocabulary is built from `text`. Needs more than block_size characters.
  CharDataset(std::string_view text, int64_t block_size);
  // `text` encoded with a given vocabulary (for a split, or a second text with the same ids).
  CharDataset(std::string_view text, int64_t block_size, std::shared_ptr<const Vocabulary> vocab);
  static CharDataset from_file(const std::string& path, int64_t block_size);

  // Windows: one per start position, text length - block_size of them.
  int64_t size() const override { return static_cast<int64_t>(tokens_.size()) - block_size_; }
  Example get(int64_t i) const override;  // x [T], y [T] int64
  ExampleSpec spec() const override;
  void fill_batch(std::span<const int64_t> indices, void* input, void* target) const override;

  // B windows at random start positions (with replacement) from `gen`: x, y [B, T].
  Batch random_batch(int64_t batch_size, Generator& gen) const;

  // The first `train_fraction` of the text and the rest, as two data sets sharing this
  // vocabulary (a split by position, so validation text is text the model never saw).
  std::pair<CharDataset, CharDataset> split(double train_fraction) const;

  int64_t block_size() const { return block_size_; }
  const Vocabulary& vocab() const { return *vocab_; }
  int64_t vocab_size() const { return vocab_->size(); }
  const std::vector<int64_t>& tokens() const { return tokens_; }
  std::vector<int64_t> encode(std::string_view s) const { return vocab_->encode(s); }
  std::string decode(const std::vector<int64_t>& ids) const { return vocab_->decode(ids); }
  std::string decode(const Tensor& ids) const { return vocab_->decode(ids); }

  double unigram_entropy_nats() const;
  double unigram_entropy_bits() const;

 private:
  CharDataset(std::vector<int64_t> tokens, int64_t block_size,
              std::shared_ptr<const Vocabulary> vocab);
  void check_block() const;

  std::shared_ptr<const Vocabulary> vocab_;
  std::vector<int64_t> tokens_;
  int64_t block_size_ = 0;
};

// Unigram entropy of any text in nats per character (see above).
double unigram_entropy_nats(std::string_view text);

// A few KB of original English prose (written for prism, free to use), so a character model
// always has something to read.
std::string_view default_text();

}  // namespace prism::nn::data
