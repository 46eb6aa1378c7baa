// libFuzzer target: the checkpoint kinds whose metadata and values prism believes, past the
// safetensors layer (fuzz_safetensors): a character transformer's (`prism generate`:
// nn::load_text_model, whose prism.gpt.* fields must agree with the tensors before any model is
// built) and an int8 model's (`prism bench --precision int8 --load`: nn::load_quantized into a
// MLP 2-3-2 (fc1 [3, 2], fc2 [2, 3]), whose scales must be finite and > 0). The input is the whole
// file. Each reader must return a model or throw prism::Error; a model of more tensors than the
// file holds is a finding, as is anything else (another exception, a sanitizer report, a leak, an
// allocation over 2 GB: a believed `layers` of 1e9).
#include <cstddef>
#include <cstdint>
#include <string>

#include "nn/models/gpt_checkpoint.h"
#include "nn/models/mlp.h"
#include "nn/quantized.h"
#include "tests/fuzz/fuzz_file.h"

namespace prism::fuzz {

// True when either reader accepted the file.
inline bool checkpoint_input(const uint8_t* data, size_t size) {
  constexpr const char* kTarget = "fuzz_checkpoint";
  static ScratchFile file("prism-fuzz-checkpoint");
  file.write(data, size);

  bool accepted = false;
  try {
    const nn::TextModel m = nn::load_text_model(file.path());
    // Every tensor of the model came from the file: it cannot hold more values than the file.
    if (m.model->parameter_count() * 4 > static_cast<int64_t>(size)) {
      finding(kTarget, "load_text_model built a model larger than the file");
    }
    accepted = true;
  } catch (const Error&) {
    // Expected: the file is rejected with a message.
  }
  try {
    static nn::MLP mlp({2, 3, 2});
    nn::load_quantized(mlp, file.path());
    accepted = true;
  } catch (const Error&) {
  }
  return accepted;
}

}  // namespace prism::fuzz

#ifndef PRISM_FUZZ_NO_MAIN
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  prism::fuzz::checkpoint_input(data, size);
  return 0;
}
#endif
