// Saving and loading a module's weights in the safetensors format (Hugging Face), so a
// checkpoint is a plain, documented file that other tools can read and that cannot run code.
//
// Layout:
//   8 bytes     N, the header length, unsigned little-endian
//   N bytes     JSON: {"<name>": {"dtype": "F32" | "F64" | "I64", "shape": [...],
//                                 "data_offsets": [begin, end]}, ...,
//                      "__metadata__": {"<key>": "<string value>", ...}}
//               padded with spaces so the data starts at a multiple of 8 bytes
//   the rest    the tensors' raw bytes, row-major, little-endian; offsets are relative to the
//               start of this section, and end - begin = numel * itemsize
//
// The names are the module's dotted named_state() names ("fc1.weight", "bn.running_mean").
//
// load_safetensors checks the whole file before it changes anything: the file opens, the
// header length fits in the file, the header is JSON of the shape above with no name twice,
// every tensor of the module is there with the same shape and dtype, its offsets lie inside the
// data and agree with its shape and dtype (sizes by checked arithmetic: no overflow), the
// tensors' byte ranges tile the data section exactly (no overlap, no gap, no trailing bytes;
// in any header order), and the values are finite. Any problem throws prism::Error naming the file
// and the tensor, and the module's weights are left exactly as they were. Tensors in the file that
// the module does not have are an error too, unless strict is false.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "nn/module.h"

namespace prism::nn {

using Metadata = std::map<std::string, std::string>;

// NaN and infinite values: a checkpoint holding one comes from a run that diverged, so saving
// or loading one is refused (an Error naming the tensor, the count and the first index) unless
// the caller allows it, e.g. to inspect the weights of a run that went wrong.
enum class NonFinite { refuse, allow };

// Writes `tensors` (cpu, any layout) to `path`, atomically (profiler/output_file.h): a
// temporary beside it, fsynced and renamed, so a failed or killed save never leaves a
// half-written checkpoint behind. `path` must be a regular file or absent (a symlink is
// followed).
void save_safetensors(const NamedTensors& tensors, const std::string& path,
                      const Metadata& metadata = {}, NonFinite non_finite = NonFinite::refuse);
// Writes module.named_state() (parameters and buffers).
void save_safetensors(const Module& module, const std::string& path, const Metadata& metadata = {},
                      NonFinite non_finite = NonFinite::refuse);

// Loads values into module.named_state(), in place of the handles (an optimizer holding the
// parameters sees the loaded values).
void load_safetensors(Module& module, const std::string& path, bool strict = true,
                      NonFinite non_finite = NonFinite::refuse);

// Checks, as load_safetensors does before it changes anything, that the file holds `module`'s
// state (names, dtypes, shapes; with `strict`, nothing else), without making a tensor: `module`
// may live on the meta device (shapes only), so a model can be checked against a file before it
// is built. `metadata`, when given, receives the file's. Throws Error naming what does not fit.
void check_safetensors_fit(const Module& module, const std::string& path, bool strict = true,
                           Metadata* metadata = nullptr);
// The number of tensors in a valid file (its layout checked), and its metadata when asked.
int64_t safetensors_tensor_count(const std::string& path, Metadata* metadata = nullptr);

// Reads every tensor of a file, fully validated, as new cpu tensors in file order.
NamedTensors read_safetensors(const std::string& path, Metadata* metadata = nullptr,
                              NonFinite non_finite = NonFinite::refuse);

}  // namespace prism::nn
