// The one validation routine: a variant of an op against a baseline, on one of the op's cases.
//
// Both run on fresh, identical inputs (the same seed). The outputs are poisoned with NaN first
// and surrounded by guard values (guarded_buffer.h), so an element the kernel never writes, or
// one it writes out of bounds, fails. The error is normalized as ggml's test-backend-ops does:
// max |y - y_ref| / max |y_ref| over every output, against the op's float32 tolerance. The lab
// (`prism lab`), the variants test, the CUDA test and the benchmarks all validate through here.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/opinfo/op_info.h"

namespace prism::opinfo {

struct ValidationCheck {
  std::string size;
  double error = 0;  // normalized max error (NaN when an output was left unwritten)
  bool guards_ok = true;
  bool ok = true;
  std::string what;  // why it failed, empty when ok
};

// The variant others are validated against: the trusted library if the op has one, else the
// clearest loop (the naive-tagged variant), else the default.
const kernels::KernelEntry& baseline_of(const kernels::OpKernels& k);

// max |y - ref| / max |ref| over all outputs (NaN if y has a NaN where ref has a number).
double normalized_error(Case& got, Case& ref);

// Runs `baseline` and `variant` on two cases of `size` made from `seed` and compares them. On
// cuda `baseline` is a CPU kernel and `variant` a CUDA one, on the same (managed) buffers; a
// fault inside the CUDA kernel is an Error naming the op, the variant and the size.
ValidationCheck validate_variant(const OpInfo& op, const kernels::KernelEntry& variant,
                                 const kernels::KernelEntry& baseline, const std::string& size,
                                 uint64_t seed, Device device = Device::cpu);

}  // namespace prism::opinfo
