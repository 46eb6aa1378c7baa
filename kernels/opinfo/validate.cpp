#include "kernels/opinfo/validate.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/gpu_runtime.h"

namespace prism::opinfo {

const kernels::KernelEntry& baseline_of(const kernels::OpKernels& k) {
  for (auto tag : {kernels::VariantTag::reference, kernels::VariantTag::naive}) {
    for (const auto& e : k.entries()) {
      if (e.tag == tag && e.has(DType::f32)) return e;
    }
  }
  return k.default_entry();
}

double normalized_error(Case& got, Case& ref) {
  double max_diff = 0, max_ref = 0;
  auto got_out = got.outputs();
  auto ref_out = ref.outputs();
  for (size_t o = 0; o < ref_out.size(); ++o) {
    const float* y = got_out[o].buffer->data();
    const float* r = ref_out[o].buffer->data();
    for (int64_t i = 0; i < ref_out[o].buffer->size(); ++i) {
      const double d = std::abs(static_cast<double>(y[i]) - r[i]);
      if (std::isnan(d) && !std::isnan(r[i])) return std::numeric_limits<double>::quiet_NaN();
      if (!std::isnan(d)) max_diff = std::max(max_diff, d);
      if (std::isfinite(r[i])) max_ref = std::max(max_ref, std::abs(static_cast<double>(r[i])));
    }
  }
  return max_ref > 0 ? max_diff / max_ref : max_diff;
}

ValidationCheck validate_variant(const OpInfo& op, const kernels::KernelEntry& variant,
                                 const kernels::KernelEntry& baseline, const std::string& size,
                                 uint64_t seed, Device device) {
  auto ref = op.make(size, seed);
  auto got = op.make(size, seed);
  ref->prepare_validation();
  ref->run(baseline);
  ref->collect();
  got->prepare_validation();
  if (device == Device::cuda) {
    try {
      got->run(variant);
      kernels::gpu::synchronize();  // the kernel only queued its work; the host reads next
    } catch (const Error& e) {
      // A fault inside a kernel (an illegal address) poisons the CUDA context: nothing after it
      // can run, so the lab stops here and names the culprit.
      throw Error("lab " + op.op + ": CUDA variant '" + variant.name + "' failed on size " + size +
                  ": " + e.what());
    }
  } else {
    got->run(variant);
  }
  got->collect();
  ValidationCheck c;
  c.size = size;
  c.error = normalized_error(*got, *ref);
  // The guards and the fill value say what went wrong more precisely than the error can.
  for (const Output& o : got->outputs()) {
    const BufferReport r = o.buffer->inspect(o.name, true);
    if (!c.ok) break;
    if (r.out_of_bounds()) {
      c.guards_ok = c.ok = false;
      c.what = "wrote outside its output buffer '" + o.name +
               "' (a guard value changed: " + std::to_string(r.written_before) +
               " element(s) before it, " + std::to_string(r.written_after) + " after)";
    } else if (r.unwritten > 0) {
      c.ok = false;
      c.what = "left " + std::to_string(r.unwritten) + " of " + std::to_string(r.size) +
               " elements of '" + o.name + "' unwritten (the first at index " +
               std::to_string(r.first_unwritten) + ")";
    } else if (r.read_first > 0) {
      c.ok = false;
      c.what = "read " + std::to_string(r.read_first) + " element(s) of '" + o.name +
               "' before writing them (the first at index " + std::to_string(r.first_read_first) +
               "): set an output before adding into it";
    }
  }
  if (c.ok && std::isnan(c.error)) {
    c.ok = false;
    c.what = "produced NaN where the reference has numbers";
  } else if (c.ok && c.error > op.tolerance) {
    c.ok = false;
    c.what = "error above the tolerance";
  }
  return c;
}

}  // namespace prism::opinfo
