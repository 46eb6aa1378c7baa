// `prism lab OP`: validate every kernel variant of an op against the reference, then time them
// side by side (kernels/lab/lab.h has the method; this file is the command around it).
//
// The machine's peaks for "% of peak" come from `prism machine`'s cache; if there is none the
// lab measures them once (a few seconds) unless --no-peak is given.
#include <cstdio>
#include <fstream>

#include "cli/commands.h"
#include "kernels/lab/lab.h"
#include "kernels/lab/lab_op.h"
#include "kernels/registry.h"
#include "profiler/machine.h"

namespace prism::cli {

namespace {

std::string list_text() {
  std::string out = "ops the lab knows (prism lab OP; sizes as shown):\n";
  for (const lab::LabOp& op : lab::lab_ops()) {
    const kernels::OpKernels* k = kernels::registry().find(op.op, Device::cpu);
    std::string variants;
    if (k) {
      for (const auto& e : k->entries()) variants += (variants.empty() ? "" : ", ") + e.name;
    }
    out += "  " + op.op + std::string(op.op.size() < 24 ? 24 - op.op.size() : 1, ' ') + op.summary +
           "\n" + std::string(26, ' ') + "size: " + op.size_syntax + "\n" + std::string(26, ' ') +
           "variants: " + variants + "\n";
  }
  return out;
}

// Input problems the command alone can judge are usage errors (exit 2).
void check_request(const LabCliOptions& o) {
  try {
    const lab::LabOp& op = lab::find_lab_op(o.op);
    for (const std::string& s : o.sizes) op.make(s, 1);
    const kernels::OpKernels& k = kernels::registry().at(op.op, Device::cpu);
    for (const std::string& v : o.variants) {
      if (!k.at(v).has(DType::f32)) {
        throw Error("variant '" + v + "' of " + op.op + " has no float32 kernel");
      }
    }
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
}

}  // namespace

int run_lab(const LabCliOptions& o) {
  if (o.list) {
    std::fputs(list_text().c_str(), stdout);
    return 0;
  }
  if (o.op.empty()) throw UsageError("lab: name an op (prism lab --list shows them)");
  check_request(o);
  if (!o.json_path.empty()) check_writable(o.json_path, "JSON");

  lab::LabOptions opts;
  opts.op = o.op;
  opts.sizes = o.sizes;
  opts.variants = o.variants;
  opts.threads = o.threads;
  opts.repetitions = o.repetitions;
  opts.min_sample_ms = o.min_sample_ms;
  opts.max_variant_s = o.max_seconds;
  opts.seed = o.seed;
  if (!o.no_peak) {
    if (const profiler::MachinePeak* peak = profiler::machine_peak(true)) {
      opts.peak_gflops = peak->peak_gflops(o.threads);
      opts.peak_gbs = peak->peak_gbps(o.threads);
    }
  }
  const lab::LabResult result = lab::run_lab(opts);
  std::fputs(lab::format_lab(result).c_str(), stdout);
  if (!o.json_path.empty()) {
    std::ofstream out(o.json_path);
    out << lab::lab_json(result);
    if (!out) throw Error("lab: could not write " + o.json_path);
    std::printf("wrote %s\n", o.json_path.c_str());
  }
  // A variant that fails validation is a finding, not a crash: report it and exit 1 so scripts
  // (and the exercises' checker) notice.
  for (const auto& v : result.validation) {
    if (!v.valid) return 1;
  }
  return 0;
}

}  // namespace prism::cli
