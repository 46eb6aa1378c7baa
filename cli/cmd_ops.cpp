// `prism ops`: the kernel registry as a table. For each op and device: its kernel variants
// (tag, one-line idea), which one is the default and which one runs now, and the cost formula
// the profiler uses for its FLOP and byte columns.
//
// It lists every kernel, so it loads the CUDA backend (which registers the CUDA kernels) when
// this build has one: the only command besides the GPU ones that maps cudart and cuBLAS.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/command.h"
#include "cli/commands.h"
#include "kernels/gpu_runtime.h"
#include "kernels/registry.h"

namespace prism::cli {

namespace {

struct Line {
  std::string op, device, variant, tag, idea;
};

std::vector<Line> variant_lines(const kernels::OpKernels& k) {
  std::vector<Line> lines;
  const kernels::KernelEntry* chosen = &k.chosen();
  const kernels::KernelEntry* fallback = &k.default_entry();
  for (const kernels::KernelEntry& e : k.entries()) {
    Line l;
    if (lines.empty()) {
      l.op = k.op();
      l.device = device_name(k.device());
    }
    l.variant = (&e == chosen ? "* " : "  ") + e.name;
    l.tag = kernels::tag_name(e.tag);
    l.idea = e.idea + (&e == fallback ? "  (default)" : "");
    // A variant that cannot run as itself here says what runs in its place.
    const std::string instead = e.runs_instead_note();
    if (!instead.empty()) l.idea += "  [here: " + instead + "]";
    lines.push_back(std::move(l));
  }
  return lines;
}

int run_ops() {
  // The CUDA kernels are registered when the backend loads; no GPU is needed to list them.
  const bool cuda_listed = !kernels::gpu::built() || kernels::gpu::load_backend();
  load_kernel_env();  // so the `*` shows what PRISM_KERNELS chose, too
  const std::vector<const kernels::OpKernels*> ops = kernels::registry().all();

  Line header{"op", "device", "  variant", "tag", "idea"};
  size_t w_op = header.op.size(), w_dev = header.device.size(), w_var = header.variant.size(),
         w_tag = header.tag.size(), w_idea = header.idea.size();
  size_t variants = 0;
  std::vector<std::vector<Line>> blocks;
  for (const kernels::OpKernels* k : ops) {
    blocks.push_back(variant_lines(*k));
    for (const Line& l : blocks.back()) {
      w_op = std::max(w_op, l.op.size());
      w_dev = std::max(w_dev, l.device.size());
      w_var = std::max(w_var, l.variant.size());
      w_tag = std::max(w_tag, l.tag.size());
      w_idea = std::max(w_idea, l.idea.size());
      ++variants;
    }
  }

  auto row = [&](const Line& l) {
    std::string s = fmt::format("{:<{}}  {:<{}}  {:<{}}  {:<{}}  {}", l.op, w_op, l.device, w_dev,
                                l.variant, w_var, l.tag, w_tag, l.idea);
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };

  std::string out = fmt::format(
      "prism ops: {} op{}, {} kernel variant{}. * = the variant that runs now; (default) = the "
      "one used when nothing is chosen.\n"
      "Choose with `prism demo --kernel op=variant` or PRISM_KERNELS=op=variant,op=variant.\n\n",
      ops.size(), ops.size() == 1 ? "" : "s", variants, variants == 1 ? "" : "s");
  out += row(header);
  out += fmt::format("{}  {}  {}  {}  {}\n", std::string(w_op, '-'), std::string(w_dev, '-'),
                     std::string(w_var, '-'), std::string(w_tag, '-'), std::string(w_idea, '-'));
  const std::string indent(w_op + 2, ' ');
  for (size_t i = 0; i < ops.size(); ++i) {
    for (const Line& l : blocks[i]) out += row(l);
    const std::string formula = ops[i]->cost_formula();
    out += fmt::format("{}cost: {}\n", indent, formula.empty() ? "(not documented)" : formula);
  }
  if (!cuda_listed) {
    out += fmt::format("\n(no CUDA variants listed: {})\n", kernels::gpu::unavailable_reason());
  }
  std::fputs(out.c_str(), stdout);
  return 0;
}

// No flags of its own.
Action setup(CLI::App& /*cmd*/) {
  return {.run = &run_ops};
}

const RegisteredCommand registered({.order = 100,
                                    .name = "ops",
                                    .help = "list every op, its kernel variants and cost formula",
                                    .setup = &setup});

}  // namespace

}  // namespace prism::cli
