// libFuzzer target: the safetensors reader (nn/safetensors.h). The input is the whole file.
// read_safetensors must return fully checked tensors or throw prism::Error; load_safetensors
// (into a Linear(2, 3): "weight" F32 [3,2], "bias" F32 [3]) must do the same and leave the
// module untouched on an error. Anything else (another exception, a sanitizer report, a leak)
// is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "nn/layers/linear.h"
#include "nn/safetensors.h"
#include "tests/fuzz/fuzz_file.h"

namespace prism::fuzz {

// True when read_safetensors accepted the file.
inline bool safetensors_input(const uint8_t* data, size_t size) {
  constexpr const char* kTarget = "fuzz_safetensors";
  static ScratchFile file("prism-fuzz-safetensors");
  static nn::Linear module(2, 3);
  file.write(data, size);

  bool accepted = false;
  try {
    nn::Metadata metadata;
    const nn::NamedTensors tensors = nn::read_safetensors(file.path(), &metadata);
    for (const auto& [name, t] : tensors) {
      if (!t.defined() || t.numel() < 0 || t.nbytes() > static_cast<int64_t>(size)) {
        finding(kTarget, "read_safetensors returned a tensor the file cannot hold");
      }
    }
    accepted = true;
  } catch (const Error&) {
    // Expected: the file is rejected with a message.
  }

  // The module path: every tensor of the module checked against the file before any is
  // replaced. strict from the input's length, so both settings are exercised.
  std::vector<const void*> before;
  for (const auto& [name, t] : module.named_state()) before.push_back(t.storage()->data());
  try {
    nn::load_safetensors(module, file.path(), /*strict=*/size % 2 == 0);
  } catch (const Error&) {
    const nn::NamedTensors after = module.named_state();
    for (size_t i = 0; i < before.size(); ++i) {
      if (after[i].second.storage()->data() != before[i]) {
        finding(kTarget, "a failed load_safetensors replaced a tensor of the module");
      }
    }
  }
  return accepted;
}

}  // namespace prism::fuzz

#ifndef PRISM_FUZZ_NO_MAIN
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  prism::fuzz::safetensors_input(data, size);
  return 0;
}
#endif
