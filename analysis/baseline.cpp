#include "analysis/baseline.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "profiler/aggregate.h"
#include "profiler/reports.h"
#include "profiler/session.h"

namespace prism::analysis {

namespace {

using ojson = nlohmann::ordered_json;

// Runs `f` with OpenMP set to one thread, then restores the count: some kernels size their
// scratch by the thread count, and a baseline must not depend on the machine.
template <class F>
auto on_one_thread(F&& f) {
#ifdef _OPENMP
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  struct Restore {
    int n;
    ~Restore() { omp_set_num_threads(n); }
  } restore{saved};
#endif
  return f();
}

ojson entry_json(const BaselineFigures& f) {
  ojson roles = ojson::object();
  for (int i = 0; i < profiler::kNumRoles; ++i) {
    roles[profiler::role_name(static_cast<profiler::MemRole>(i))] =
        f.tracked_peak_by_role[static_cast<size_t>(i)];
  }
  return ojson{{"mode", bench_mode_name(f.spec.mode)},
               {"batch", f.spec.batch},
               {"device", device_name(f.spec.device)},
               {"image_size", f.spec.options.image_size},
               {"block_size", f.spec.options.block_size},
               {"num_classes", f.spec.options.num_classes},
               {"flops", f.counters.flops},
               {"macs", f.counters.macs},
               {"bytes", f.counters.bytes},
               {"allocs", f.counters.allocs},
               {"alloc_bytes", f.counters.alloc_bytes},
               {"tracked_peak_bytes", f.tracked_peak_bytes},
               {"tracked_peak_by_role", roles}};
}

std::string file_text(const std::string& model, const std::vector<BaselineFigures>& entries) {
  ojson doc;
  doc["kind"] = "prism.baseline";
  doc["about"] =
      "Deterministic figures of one call after warm-up, on one thread: checked exactly by make "
      "test; update on purpose with `prism gate --baselines DIR --update`.";
  doc["model"] = model;
  doc["entries"] = ojson::array();
  for (const BaselineFigures& f : entries) doc["entries"].push_back(entry_json(f));
  return doc.dump(2) + "\n";
}

int64_t get_int(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || !j[key].is_number_integer()) {
    throw Error(where + ": field '" + key + "' is missing or not a whole number");
  }
  return j[key].get<int64_t>();
}

std::string get_str(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || !j[key].is_string()) {
    throw Error(where + ": field '" + key + "' is missing or not a string");
  }
  return j[key].get<std::string>();
}

std::string label(const BaselineSpec& s) {
  return fmt::format("{} {} batch {} ({})", s.model, bench_mode_name(s.mode), s.batch,
                     device_name(s.device));
}

}  // namespace

BaselineFigures measure_baseline(const BaselineSpec& spec) {
  return on_one_thread([&spec] {
    const int dev = static_cast<int>(spec.device);  // the memory tracker counts per device
    BaselineFigures f;
    f.spec = spec;
    Workload w(spec.model, spec.mode, spec.options, spec.device, /*seed=*/42);
    w.set_batch(spec.batch, /*seed=*/43);
    w.call();  // the first call makes the optimizer's state and the gradients' buffers
    w.call();
    profiler::reset_peak(dev);
    profiler::Profile profile;
    {
      profiler::Session session;
      w.call();
      profile = session.stop();
    }
    const profiler::MemoryStats mem = profiler::memory_stats(dev);
    f.tracked_peak_bytes = mem.peak_bytes;
    f.tracked_peak_by_role = mem.peak_by_role;
    for (const profiler::OpRow& r : profiler::aggregate_ops(profile)) {
      f.counters.flops = profiler::saturating_add(f.counters.flops, r.cost.flops);
      f.counters.macs = profiler::saturating_add(f.counters.macs, r.cost.macs);
      f.counters.bytes = profiler::saturating_add(f.counters.bytes, r.cost.bytes);
      f.counters.allocs += r.allocs;
      f.counters.alloc_bytes = profiler::saturating_add(f.counters.alloc_bytes, r.alloc_bytes);
    }
    return f;
  });
}

std::vector<BaselineSpec> default_baseline_specs() {
  std::vector<BaselineSpec> specs;
  auto both = [&specs](const std::string& model, int64_t batch, Device device,
                       nn::ModelOptions o = {}) {
    for (BenchMode m : {BenchMode::infer, BenchMode::train}) {
      specs.push_back({model, m, batch, device, o});
    }
  };
  both("mlp", 8, Device::cpu);
  both("cnn", 8, Device::cpu);
  nn::ModelOptions small_gpt;
  small_gpt.block_size = 32;
  both("transformer", 2, Device::cpu, small_gpt);
  nn::ModelOptions cifar;
  cifar.image_size = 32;
  cifar.num_classes = 10;
  both("resnet18", 2, Device::cpu, cifar);
  both("resnet34", 1, Device::meta);
  both("resnet50", 1, Device::meta);
  both("gpt2-small", 1, Device::meta);
  both("gpt2-medium", 1, Device::meta);
  return specs;
}

void write_default_baselines(const std::string& dir) {
  std::map<std::string, std::vector<BaselineFigures>> by_model;
  std::vector<std::string> order;
  for (const BaselineSpec& s : default_baseline_specs()) {
    if (!by_model.count(s.model)) order.push_back(s.model);
    by_model[s.model].push_back(measure_baseline(s));
  }
  std::filesystem::create_directories(dir);
  for (const std::string& m : order) {
    profiler::write_text_file(dir + "/" + m + ".json", file_text(m, by_model[m]));
  }
}

std::vector<BaselineCheck> check_baselines(const std::string& dir, bool update) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error("baselines: " + dir + " is not a directory");
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) throw Error("baselines: no *.json file in " + dir);

  std::vector<BaselineCheck> out;
  for (const std::string& path : files) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    nlohmann::json doc;
    try {
      doc = nlohmann::json::parse(ss.str());
    } catch (const nlohmann::json::parse_error& e) {
      throw Error(path + ": not valid JSON (" + e.what() + ")");
    }
    if (!doc.is_object() || doc.value("kind", "") != "prism.baseline") {
      throw Error(path + ": not a prism baseline (no \"kind\": \"prism.baseline\")");
    }
    const std::string model = get_str(doc, "model", path);
    if (!doc.contains("entries") || !doc["entries"].is_array() || doc["entries"].empty()) {
      throw Error(path + ": no entries");
    }
    BaselineCheck check;
    check.file = path;
    std::vector<BaselineFigures> measured;
    for (const auto& e : doc["entries"]) {
      BaselineSpec s;
      s.model = model;
      const std::string mode = get_str(e, "mode", path);
      if (mode != "infer" && mode != "train") throw Error(path + ": mode '" + mode + "'");
      s.mode = mode == "infer" ? BenchMode::infer : BenchMode::train;
      s.batch = get_int(e, "batch", path);
      const std::string device = get_str(e, "device", path);
      if (device != "cpu" && device != "meta") {
        throw Error(path + ": device '" + device + "' (baselines run on cpu or meta)");
      }
      s.device = device == "cpu" ? Device::cpu : Device::meta;
      s.options.image_size = get_int(e, "image_size", path);
      s.options.block_size = get_int(e, "block_size", path);
      s.options.num_classes = get_int(e, "num_classes", path);
      const BaselineFigures f = measure_baseline(s);
      measured.push_back(f);
      ++check.entries;
      auto cmp = [&](const char* what, int64_t want, int64_t got) {
        if (want != got) {
          check.differences.push_back(
              fmt::format("{}: {} {} -> {} ({:+})", label(s), what, want, got, got - want));
        }
      };
      cmp("flops", get_int(e, "flops", path), f.counters.flops);
      cmp("macs", get_int(e, "macs", path), f.counters.macs);
      cmp("bytes", get_int(e, "bytes", path), f.counters.bytes);
      cmp("allocs", get_int(e, "allocs", path), f.counters.allocs);
      cmp("alloc_bytes", get_int(e, "alloc_bytes", path), f.counters.alloc_bytes);
      cmp("tracked_peak_bytes", get_int(e, "tracked_peak_bytes", path), f.tracked_peak_bytes);
      if (!e.contains("tracked_peak_by_role") || !e["tracked_peak_by_role"].is_object()) {
        throw Error(path + ": field 'tracked_peak_by_role' is missing");
      }
      for (int i = 0; i < profiler::kNumRoles; ++i) {
        const char* role = profiler::role_name(static_cast<profiler::MemRole>(i));
        cmp((std::string("peak ") + role).c_str(), get_int(e["tracked_peak_by_role"], role, path),
            f.tracked_peak_by_role[static_cast<size_t>(i)]);
      }
    }
    if (update && !check.differences.empty()) {
      profiler::write_text_file(path, file_text(model, measured));
    }
    out.push_back(std::move(check));
  }
  return out;
}

}  // namespace prism::analysis
