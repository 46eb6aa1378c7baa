#include "analysis/environment.h"

#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "profiler/build_info.h"
#include "profiler/busy.h"
#include "profiler/first_line.h"
#include "profiler/machine.h"
#include "profiler/recorder.h"

namespace prism::analysis {

Fingerprint fingerprint(int threads, const std::string& device) {
  const profiler::MachinePeak m = profiler::describe_machine();
  Fingerprint f;
  f.cpu_model = m.cpu_model;
  f.logical_cpus = m.logical_cpus;
  f.physical_cores = m.physical_cores;
  f.simd = m.simd;
  f.compiler = build_info::kCompiler;
  f.flags = build_info::kFlags;
  f.build_type = build_info::kBuildType;
  f.threads = threads;
  f.version = build_info::kVersion;
  f.git_commit = build_info::kGitCommit;
  f.device = device;
  return f;
}

std::vector<std::string> fingerprint_differences(const Fingerprint& a, const Fingerprint& b) {
  std::vector<std::string> d;
  auto check = [&d](const char* what, const auto& x, const auto& y) {
    if (x != y) d.push_back(fmt::format("{}: {} vs {}", what, x, y));
  };
  check("cpu", a.cpu_model, b.cpu_model);
  check("logical cpus", a.logical_cpus, b.logical_cpus);
  check("compiler", a.compiler, b.compiler);
  check("flags", a.flags, b.flags);
  check("build type", a.build_type, b.build_type);
  check("threads", a.threads, b.threads);
  check("device", a.device, b.device);
  check("prism version", a.version, b.version);
  check("git commit", a.git_commit, b.git_commit);
  return d;
}

namespace {

int read_flag(const std::string& path) {
  const std::string s = profiler::first_line(path);
  if (s == "0") return 0;
  if (s == "1") return 1;
  return -1;
}

}  // namespace

Environment check_environment(int threads, int physical_cores, int logical_cpus, int sample_ms) {
  Environment env;
  env.threads = threads;
  env.build_type = build_info::kBuildType;
  env.sanitizers = std::string(build_info::kFlags).find("-fsanitize") != std::string::npos;
  env.profiler_recording = profiler::recording();
  if (const char* bind = std::getenv("OMP_PROC_BIND")) env.omp_proc_bind = bind;

  std::istringstream load(profiler::first_line("/proc/loadavg"));
  if (double l = 0; load >> l) env.load_avg_1m = l;

  env.busy = profiler::busy_processes(sample_ms).names;

  env.governor = profiler::first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  env.boost = read_flag("/sys/devices/system/cpu/cpufreq/boost");
  if (env.boost < 0) {
    const int no_turbo = read_flag("/sys/devices/system/cpu/intel_pstate/no_turbo");
    if (no_turbo >= 0) env.boost = 1 - no_turbo;
  }
  env.smt_active = read_flag("/sys/devices/system/cpu/smt/active");

  auto& w = env.warnings;
  if (!env.busy.empty()) {
    std::string list;
    for (const std::string& b : env.busy) list += (list.empty() ? "" : ", ") + b;
    w.push_back("other processes are busy: " + list +
                "; they take CPU time and memory bandwidth from the run");
  } else if (env.load_avg_1m >= 1.0) {
    w.push_back(
        fmt::format("load average {:.2f}: about {:.0f} CPU(s) were busy over the last minute",
                    env.load_avg_1m, env.load_avg_1m));
  }
  if (!env.governor.empty() && env.governor != "performance") {
    w.push_back("CPU frequency governor is '" + env.governor +
                "': the clock may change during the run (cpupower frequency-set -g performance)");
  }
  if (env.boost == 1) {
    w.push_back("turbo boost is on: the clock depends on temperature and on how many cores run");
  }
  if (physical_cores > 0 && threads > physical_cores) {
    w.push_back(fmt::format("{} threads on {} physical cores: threads share cores (SMT)", threads,
                            physical_cores));
  }
  if (logical_cpus > 0 && threads > logical_cpus) {
    w.push_back(fmt::format("{} threads on {} CPUs: threads take turns on the same CPU", threads,
                            logical_cpus));
  }
  if (threads > 1 && env.omp_proc_bind.empty()) {
    w.push_back(
        "OpenMP threads are not bound to cores (OMP_PROC_BIND unset): the OS may move them "
        "between cores mid-run");
  }
  if (env.build_type != "Release" && env.build_type != "RelWithDebInfo") {
    w.push_back("build type '" + env.build_type +
                "' is not optimised: figures are not representative");
  }
  if (env.sanitizers) w.push_back("built with sanitizers: every memory access is checked (slow)");
  if (env.profiler_recording) {
    w.push_back("a profiler session is recording: each op pays the profiler's overhead");
  }
  return env;
}

ResidentMemory resident_memory() {
  ResidentMemory r;
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    auto kib = [&line](const char* key) -> int64_t {
      if (line.rfind(key, 0) != 0) return -1;
      return std::atoll(line.c_str() + std::string(key).size()) * 1024;
    };
    if (const int64_t v = kib("VmRSS:"); v >= 0) r.rss_bytes = v;
    if (const int64_t v = kib("VmHWM:"); v >= 0) r.peak_bytes = v;
  }
  return r;
}

bool reset_resident_peak() {
  std::ofstream f("/proc/self/clear_refs");
  if (!f) return false;
  f << "5";
  f.flush();
  return static_cast<bool>(f);
}

std::string warnings_section(const Environment& env) {
  if (env.warnings.empty()) return "";
  std::string out = "\nwarnings (kept in the JSON):\n";
  for (const std::string& w : env.warnings) out += "  " + w + "\n";
  return out;
}

}  // namespace prism::analysis
