// libFuzzer target: the character-level text loader (nn/data/text.h). The first byte of the
// input picks the block size (1 to 64), the second the split fraction; the rest is the text
// file, read with CharDataset::from_file. Then every entry point that takes the text or its ids
// runs: encode/decode (which must round-trip), get, fill_batch, random_batch, split and the
// unigram entropy (which must lie in [0, ln vocab]). Expected failures are prism::Error;
// anything else (another exception, a wrong round trip, a sanitizer report, a leak) is a
// finding.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "nn/data/text.h"
#include "tests/fuzz/fuzz_file.h"

namespace prism::fuzz {

inline void check_char_dataset(const nn::data::CharDataset& ds, std::string_view text) {
  constexpr const char* kTarget = "fuzz_text";
  if (ds.size() < 1) finding(kTarget, "a data set with no windows");
  if (!text.empty() && ds.decode(ds.tokens()) != text) {
    finding(kTarget, "decode(encode(text)) != text");
  }
  const nn::data::Example last = ds.get(ds.size() - 1);
  if (last.input.numel() != ds.block_size()) finding(kTarget, "get: wrong window length");
  const std::vector<int64_t> idx = {0, ds.size() - 1};
  std::vector<int64_t> x(idx.size() * static_cast<size_t>(ds.block_size()));
  std::vector<int64_t> y(x.size());
  ds.fill_batch(idx, x.data(), y.data());
  for (int64_t t : x) {
    if (t < 0 || t >= ds.vocab_size()) finding(kTarget, "fill_batch: an id outside the vocabulary");
  }
  Generator gen(static_cast<uint64_t>(text.size()));
  if (ds.random_batch(3, gen).size() != 3) finding(kTarget, "random_batch: wrong batch size");
  const double h = ds.unigram_entropy_nats();
  if (!(h >= 0 && h <= std::log(static_cast<double>(ds.vocab_size())) + 1e-9)) {
    finding(kTarget, "unigram entropy outside [0, ln vocab]");
  }
}

// True when the text loaded and split.
inline bool text_input(const uint8_t* data, size_t size) {
  constexpr const char* kTarget = "fuzz_text";
  static ScratchFile file("prism-fuzz-text");
  if (size < 2) return false;
  const int64_t block_size = 1 + data[0] % 64;
  const double fraction = (data[1] + 1) / 257.0;  // in (0, 1)
  const std::string_view text(reinterpret_cast<const char*>(data + 2), size - 2);
  file.write(text.data(), text.size());

  bool accepted = false;
  try {
    const auto ds = nn::data::CharDataset::from_file(file.path(), block_size);
    check_char_dataset(ds, text);
    // Ids from the input itself: decode must take those in range and reject the others.
    std::vector<int64_t> ids;
    for (unsigned char c : text) ids.push_back(static_cast<int64_t>(c) - 64);
    try {
      (void)ds.decode(ids);
    } catch (const Error&) {
    }
    try {
      (void)ds.encode(std::string_view(reinterpret_cast<const char*>(data), 2));
    } catch (const Error&) {
    }
    const auto [train, val] = ds.split(fraction);
    check_char_dataset(train, {});
    check_char_dataset(val, {});
    accepted = true;
  } catch (const Error&) {
    // Expected: a text too short for the block size, a split part too short, ...
  }
  if (nn::data::unigram_entropy_nats(text) > 6.0) {  // ln 256 = 5.545
    finding(kTarget, "unigram_entropy_nats above ln 256");
  }
  return accepted;
}

}  // namespace prism::fuzz

#ifndef PRISM_FUZZ_NO_MAIN
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  prism::fuzz::text_input(data, size);
  return 0;
}
#endif
