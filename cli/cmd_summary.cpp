// `prism summary MODEL [--input 1x3x224x224]`: a model's structure and costs, module by module,
// without its memory or its compute.
//
// The model is built and run forward (and backward) on the meta device: every tensor has a
// shape and no data, every op checks shapes and records its FLOPs, bytes and allocations, and
// no kernel runs. So resnet50 at 224x224 or GPT-2 at 1024 tokens is summarised in a fraction
// of a second, with the same cost formulas the profiler uses on real runs.
#include <cstdio>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/command.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "nn/models/zoo.h"
#include "profiler/aggregate.h"
#include "profiler/clock.h"
#include "profiler/session.h"
#include "profiler/text_table.h"
#include "tensor/ops.h"

namespace prism::cli {

namespace {

// The flags, as add_options (below) declares them.
struct SummaryOptions {
  std::string model;
  std::string input;  // "1x3x224x224"; "" = the model's default input
  int depth = 0;      // 0 = every level
  bool backward = true;
};

// "1x3x224x224" -> [1,3,224,224].
Dims parse_shape(const std::string& s) {
  Dims d;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, 'x')) {
    size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != part.size() || v <= 0) {
      throw UsageError("--input: expected sizes like 1x3x224x224, got '" + s + "'");
    }
    d.push_back(v);
  }
  if (d.empty()) throw UsageError("--input: expected sizes like 1x3x224x224, got '" + s + "'");
  return d;
}

std::string count(int64_t v) {
  std::string digits = std::to_string(v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

int run_summary(const SummaryOptions& o) {
  using namespace profiler::text;
  const int64_t t0 = profiler::now_ns();
  DefaultDevice meta(Device::meta);
  std::shared_ptr<nn::Module> model = nn::make_model(o.model);
  nn::ModelInput in = nn::default_input(o.model);
  if (!o.input.empty()) in.shape = parse_shape(o.input);
  Tensor x = in.make();

  profiler::Session session;
  Tensor y = (*model)(x);
  if (o.backward) sum(y).backward();
  const profiler::Profile& p = session.stop();
  const double secs = static_cast<double>(profiler::now_ns() - t0) / 1e9;

  std::map<std::string, const nn::Module*> modules;
  for (const auto& [path, m] : model->named_modules()) {
    modules[path.empty() ? model->name() : model->name() + "." + path] = m;
  }
  std::vector<profiler::ScopeRow> rows;
  for (const profiler::ScopeRow& r : profiler::aggregate_scopes(p)) {
    if (r.path.empty() || !modules.count(r.path)) continue;  // module scopes only
    if (o.depth > 0 && r.depth > o.depth) continue;
    rows.push_back(r);
  }

  int64_t max_flops = 1, max_bytes = 1;
  for (const auto& r : rows) {
    max_flops = std::max({max_flops, r.cost[0].flops, r.cost[1].flops});
    max_bytes = std::max(max_bytes, r.alloc_bytes_by_phase[0]);
  }
  const Unit fu = pick_unit(kFlopUnits, max_flops);
  const Unit mu = pick_unit(kFlopUnits, max_flops / 2);
  const Unit bu = pick_unit(kByteUnits, max_bytes);
  std::vector<Column> cols;
  for (auto [h, left] : std::initializer_list<std::pair<std::string, bool>>{
           {"module", true},
           {"type", true},
           {"output", true},
           {"params", false},
           {fmt::format("fwd {}MAC", std::string(mu.name).substr(0, 1)), false},
           {fmt::format("fwd {}", fu.name), false},
           {fmt::format("bwd {}", fu.name), false},
           {fmt::format("act {}", bu.name), false}}) {
    cols.push_back(Column{h, left, {}});
  }
  for (const auto& r : rows) {
    const nn::Module* m = modules[r.path];
    size_t c = 0;
    auto put = [&](std::string s) { cols[c++].cells.push_back(std::move(s)); };
    put(std::string(static_cast<size_t>(std::max(r.depth - 1, 0)) * 2, ' ') + r.name);
    put(m->type_name());
    put(r.output_shape.empty() ? "-" : r.output_shape);
    put(count(m->parameter_count()));
    put(amount(r.cost[0].macs, mu, 3));
    put(amount(r.cost[0].flops, fu, 3));
    put(amount(r.cost[1].flops, fu, 3));
    put(amount(r.alloc_bytes_by_phase[0], bu, 3));
  }
  std::printf("%s on input %s %s (computed on the meta device: shapes only, no data)\n\n",
              o.model.c_str(), in.shape.str().c_str(), dtype_name(in.dtype));
  std::fputs(render(cols).c_str(), stdout);

  profiler::Cost fwd, bwd;
  int64_t act = 0;
  for (const auto& r : profiler::aggregate_scopes(p)) {
    if (r.depth == 1 && r.path == model->name()) {
      fwd = r.cost[0];
      bwd = r.cost[1];
      act = r.alloc_bytes_by_phase[0];
    }
  }
  const int64_t params = model->parameter_count();
  std::printf(
      "\nparameters: %s (%.1f MB as float32)\nforward:  %s MACs, %s FLOPs\n"
      "backward: %s FLOPs%s\nactivations allocated in forward: %.1f MB\n"
      "summary computed in %.3f s\n",
      count(params).c_str(), static_cast<double>(params) * 4 / 1e6, count(fwd.macs).c_str(),
      count(fwd.flops).c_str(), count(bwd.flops).c_str(),
      o.backward ? " (from sum(output), all parameters requiring grad)" : " (not run)",
      static_cast<double>(act) / 1e6, secs);
  return 0;
}

void add_options(CLI::App& cmd, SummaryOptions& o) {
  cmd.add_option("model", o.model,
                 "mlp, cnn, transformer, resnet18, resnet34, resnet50, gpt2-small, gpt2-medium")
      ->required();
  cmd.add_option("--input", o.input, "input shape, e.g. 1x3x224x224 (default: the model's)")
      ->type_name("NxCxHxW");
  cmd.add_option("--depth", o.depth, "module levels to show (0 = all)")
      ->check(whole_number(0, 100));
}

Action setup(CLI::App& cmd) {
  auto o = std::make_shared<SummaryOptions>();
  add_options(cmd, *o);
  return {.run = [o] { return run_summary(*o); }};
}

const RegisteredCommand registered(
    {.order = 400,
     .name = "summary",
     .help = "per-module shapes, parameters, FLOPs and activation memory (meta device)",
     .setup = &setup});

}  // namespace

}  // namespace prism::cli
