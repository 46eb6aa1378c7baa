// The small vocabulary shared by every layer above profiler/: devices, dtypes, errors.
// (It lives here, the lowest layer that needs it, so kernels and tensors speak the same words.)
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace prism {

// meta: tensors with a shape and a dtype but no data. Ops on them check shapes, count FLOPs and
// bytes, and track (virtual) memory, but run no kernel: a model's costs without running it.
enum class Device : uint8_t { cpu = 0, cuda = 1, meta = 2 };
// f32 everywhere; f64 for references and gradient checks; i64 for indices and labels; bf16 for
// mixed-precision storage (kernels/bfloat16.h); i8 and i32 for quantized weights and their
// accumulators.
enum class DType : uint8_t { f32, f64, i64, bf16, i8, i32 };
constexpr int kDTypeCount = 6;

inline const char* device_name(Device d) {
  switch (d) {
    case Device::cpu:
      return "cpu";
    case Device::cuda:
      return "cuda";
    case Device::meta:
      return "meta";
  }
  return "?";
}

inline const char* dtype_name(DType t) {
  switch (t) {
    case DType::f32:
      return "float32";
    case DType::f64:
      return "float64";
    case DType::i64:
      return "int64";
    case DType::bf16:
      return "bfloat16";
    case DType::i8:
      return "int8";
    case DType::i32:
      return "int32";
  }
  return "?";
}

inline int64_t dtype_size(DType t) {
  switch (t) {
    case DType::f64:
    case DType::i64:
      return 8;
    case DType::f32:
    case DType::i32:
      return 4;
    case DType::bf16:
      return 2;
    case DType::i8:
      return 1;
  }
  return 0;
}

inline bool is_floating(DType t) {
  return t == DType::f32 || t == DType::f64 || t == DType::bf16;
}

// Every error prism raises on bad input derives from this. The message names the op and the
// offending shapes or values, e.g. "matmul: inner dimensions differ: [3,4] @ [5,6]".
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace prism
