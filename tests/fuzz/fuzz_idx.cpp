// libFuzzer target: the IDX reader (nn/data/idx.h), raw and gzip-compressed. The first byte of
// the input picks the mode: odd, the rest is gzip-compressed here before it is written, so the
// fuzzer's edits of the IDX header and data reach the reader through zlib's inflate; even, the
// rest is the file as it is (a raw IDX file, or gzip bytes the fuzzer corrupts directly). The
// same file goes through read_idx_images and read_idx_labels: each must return a checked
// tensor or throw prism::Error. Anything else (another exception, a sanitizer report, a leak)
// is a finding.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "nn/data/idx.h"
#include "tests/fuzz/fuzz_file.h"

namespace prism::fuzz {

// `size` bytes as a gzip stream (deflate with a gzip wrapper: windowBits 15 + 16).
inline std::vector<uint8_t> gzip_bytes(const uint8_t* data, size_t size) {
  z_stream z{};
  if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    finding("fuzz_idx", "deflateInit2 failed");
  }
  std::vector<uint8_t> out(deflateBound(&z, static_cast<uLong>(size)) + 32);
  z.next_in = const_cast<Bytef*>(data);
  z.avail_in = static_cast<uInt>(size);
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) finding("fuzz_idx", "deflate did not finish");
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// True when read_idx_images or read_idx_labels accepted the file.
inline bool idx_input(const uint8_t* data, size_t size) {
  constexpr const char* kTarget = "fuzz_idx";
  static ScratchFile file("prism-fuzz-idx");
  if (size == 0) return false;
  if (data[0] & 1) {
    const std::vector<uint8_t> gz = gzip_bytes(data + 1, size - 1);
    file.write(gz.data(), gz.size());
  } else {
    file.write(data + 1, size - 1);
  }

  bool accepted = false;
  try {
    const Tensor images = nn::data::read_idx_images(file.path());
    if (images.dim() != 3 || images.dtype() != DType::f32) finding(kTarget, "images: bad tensor");
    const float* p = images.data<float>();
    for (int64_t i = 0; i < images.numel(); ++i) {
      if (!(p[i] >= 0.0f && p[i] <= 1.0f)) finding(kTarget, "images: a pixel outside [0, 1]");
    }
    accepted = true;
  } catch (const Error&) {
    // Expected: the file is rejected with a message.
  }
  try {
    const Tensor labels = nn::data::read_idx_labels(file.path());
    if (labels.dim() != 1 || labels.dtype() != DType::i64) finding(kTarget, "labels: bad tensor");
    const int64_t* p = labels.data<int64_t>();
    for (int64_t i = 0; i < labels.numel(); ++i) {
      if (p[i] < 0 || p[i] > 255) finding(kTarget, "labels: a label outside [0, 255]");
    }
    accepted = true;
  } catch (const Error&) {
  }
  return accepted;
}

}  // namespace prism::fuzz

#ifndef PRISM_FUZZ_NO_MAIN
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  prism::fuzz::idx_input(data, size);
  return 0;
}
#endif
