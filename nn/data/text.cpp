#include "nn/data/text.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numbers>

namespace prism::nn::data {

namespace {

std::string describe(unsigned char c) {
  if (c >= 32 && c < 127) return std::string("'") + static_cast<char>(c) + "'";
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02X", c);
  return buf;
}

}  // namespace

// ---- Vocabulary ---------------------------------------------------------------------------------

Vocabulary::Vocabulary(std::string_view text) {
  bool seen[256] = {};
  for (char c : text) seen[static_cast<unsigned char>(c)] = true;
  for (int c = 0; c < 256; ++c) {
    if (seen[c]) {
      id_[static_cast<size_t>(c)] = static_cast<int64_t>(chars_.size());
      chars_.push_back(static_cast<char>(c));
    }
  }
}

int64_t Vocabulary::id(unsigned char c) const {
  const int64_t i = id_[c];
  if (i < 0) throw Error("Vocabulary: character " + describe(c) + " is not in the vocabulary");
  return i;
}

char Vocabulary::character(int64_t i) const {
  if (i < 0 || i >= size()) {
    throw Error("Vocabulary: id " + std::to_string(i) + " out of range for a vocabulary of " +
                std::to_string(size()));
  }
  return chars_[static_cast<size_t>(i)];
}

std::vector<int64_t> Vocabulary::encode(std::string_view text) const {
  std::vector<int64_t> ids;
  ids.reserve(text.size());
  for (char c : text) ids.push_back(id(static_cast<unsigned char>(c)));
  return ids;
}

std::string Vocabulary::decode(const std::vector<int64_t>& ids) const {
  std::string s;
  s.reserve(ids.size());
  for (int64_t i : ids) s.push_back(character(i));
  return s;
}

std::string Vocabulary::decode(const Tensor& ids) const {
  if (ids.dtype() != DType::i64) {
    throw Error(std::string("Vocabulary::decode: ids must be int64, got ") +
                dtype_name(ids.dtype()));
  }
  return decode(ids.to_vector<int64_t>());
}

// ---- CharDataset --------------------------------------------------------------------------------

CharDataset::CharDataset(std::string_view text, int64_t block_size)
    : CharDataset(text, block_size, std::make_shared<const Vocabulary>(text)) {}

CharDataset::CharDataset(std::string_view text, int64_t block_size,
                         std::shared_ptr<const Vocabulary> vocab)
    : CharDataset(vocab ? vocab->encode(text) : std::vector<int64_t>{}, block_size, vocab) {}

CharDataset::CharDataset(std::vector<int64_t> tokens, int64_t block_size,
                         std::shared_ptr<const Vocabulary> vocab)
    : vocab_(std::move(vocab)), tokens_(std::move(tokens)), block_size_(block_size) {
  if (!vocab_) throw Error("CharDataset: no vocabulary");
  check_block();
}

void CharDataset::check_block() const {
  if (block_size_ < 1)
    throw Error("CharDataset: block_size must be >= 1, got " + std::to_string(block_size_));
  if (static_cast<int64_t>(tokens_.size()) <= block_size_) {
    throw Error("CharDataset: a text of " + std::to_string(tokens_.size()) +
                " characters is too short for block_size " + std::to_string(block_size_) +
                " (it needs at least block_size + 1)");
  }
}

CharDataset CharDataset::from_file(const std::string& path, int64_t block_size) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw Error(path + ": no such file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open: " + std::strerror(errno));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error(path + ": read error");
  try {
    return CharDataset(text, block_size);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

Example CharDataset::get(int64_t i) const {
  check_index("CharDataset::get", i);
  Tensor x = make_data_tensor({block_size_}, DType::i64);
  Tensor y = make_data_tensor({block_size_}, DType::i64);
  const auto n = static_cast<size_t>(block_size_) * sizeof(int64_t);
  std::memcpy(x.data<int64_t>(), tokens_.data() + i, n);
  std::memcpy(y.data<int64_t>(), tokens_.data() + i + 1, n);
  return Example{x, y};
}

ExampleSpec CharDataset::spec() const {
  return ExampleSpec{Dims{block_size_}, DType::i64, Dims{block_size_}, DType::i64};
}

void CharDataset::fill_batch(std::span<const int64_t> indices, void* input, void* target) const {
  auto* x = static_cast<int64_t*>(input);
  auto* y = static_cast<int64_t*>(target);
  const auto n = static_cast<size_t>(block_size_) * sizeof(int64_t);
  for (int64_t i : indices) {
    check_index("CharDataset::fill_batch", i);
    std::memcpy(x, tokens_.data() + i, n);
    std::memcpy(y, tokens_.data() + i + 1, n);
    x += block_size_;
    y += block_size_;
  }
}

Batch CharDataset::random_batch(int64_t batch_size, Generator& gen) const {
  if (batch_size < 1)
    throw Error("CharDataset::random_batch: batch_size must be >= 1, got " +
                std::to_string(batch_size));
  std::vector<int64_t> starts(static_cast<size_t>(batch_size));
  const auto windows = static_cast<uint64_t>(size());
  // The modulo's bias is below windows / 2^64: invisible.
  for (int64_t& s : starts) s = static_cast<int64_t>(gen.next_u64() % windows);
  return get_batch(starts);
}

std::pair<CharDataset, CharDataset> CharDataset::split(double train_fraction) const {
  if (!(train_fraction > 0 && train_fraction < 1)) {
    throw Error("CharDataset::split: train_fraction must be in (0, 1), got " +
                std::to_string(train_fraction));
  }
  const auto cut =
      static_cast<size_t>(std::floor(static_cast<double>(tokens_.size()) * train_fraction));
  auto part = [&](size_t from, size_t to, const char* which) {
    try {
      return CharDataset(std::vector<int64_t>(tokens_.begin() + static_cast<std::ptrdiff_t>(from),
                                              tokens_.begin() + static_cast<std::ptrdiff_t>(to)),
                         block_size_, vocab_);
    } catch (const Error& e) {
      throw Error(std::string("CharDataset::split(") + std::to_string(train_fraction) + "): the " +
                  which + " part: " + e.what());
    }
  };
  return {part(0, cut, "training"), part(cut, tokens_.size(), "validation")};
}

double CharDataset::unigram_entropy_nats() const {
  std::vector<int64_t> counts(static_cast<size_t>(vocab_->size()), 0);
  for (int64_t t : tokens_) ++counts[static_cast<size_t>(t)];
  const double n = static_cast<double>(tokens_.size());
  double h = 0;
  for (int64_t c : counts) {
    if (c > 0) h -= (static_cast<double>(c) / n) * std::log(static_cast<double>(c) / n);
  }
  return h;
}

double CharDataset::unigram_entropy_bits() const {
  return unigram_entropy_nats() / std::numbers::ln2;
}

double unigram_entropy_nats(std::string_view text) {
  if (text.empty()) return 0;
  int64_t counts[256] = {};
  for (char c : text) ++counts[static_cast<unsigned char>(c)];
  const double n = static_cast<double>(text.size());
  double h = 0;
  for (int64_t c : counts) {
    if (c > 0) h -= (static_cast<double>(c) / n) * std::log(static_cast<double>(c) / n);
  }
  return h;
}

}  // namespace prism::nn::data
