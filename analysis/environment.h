// What a careful engineer checks before trusting a timing: is anything else running, does the
// clock speed wander, are threads sharing cores, is this an optimised build? Each finding is
// a warning printed with the result and kept in its JSON, so a number never travels without
// the conditions it was measured under. Plus the machine fingerprint that `prism compare`
// checks before it compares two results.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace prism::analysis {

// Who measured, where: two results are comparable when these match (apart from what the
// comparison is about).
struct Fingerprint {
  std::string cpu_model;
  int logical_cpus = 0;
  int physical_cores = 0;
  std::string simd;
  std::string compiler;
  std::string flags;
  std::string build_type;
  int threads = 1;
  std::string version;
  std::string git_commit;  // the commit the build was configured at; "" when unknown
  std::string device;      // "cpu", or the GPU's name
};

// This process: the CPU and build from profiler::describe_machine(), `threads` OpenMP threads.
Fingerprint fingerprint(int threads, const std::string& device = "cpu");

// The fields in which `a` and `b` differ, as "threads: 1 vs 2" lines (empty when none).
std::vector<std::string> fingerprint_differences(const Fingerprint& a, const Fingerprint& b);

// The conditions at the moment of measuring.
struct Environment {
  double load_avg_1m = -1;        // /proc/loadavg; -1 unknown
  std::vector<std::string> busy;  // other processes using >= 20% of a CPU: "cc1plus (pid 12, 97%)"
  std::string governor;           // cpufreq scaling governor of cpu0; "" unknown
  int boost = -1;                 // 1 on, 0 off, -1 unknown (cpufreq/boost, intel_pstate)
  int smt_active = -1;            // 1 on, 0 off, -1 unknown
  int threads = 1;                // OpenMP threads
  std::string omp_proc_bind;      // OMP_PROC_BIND, "" unset
  std::string build_type;         // CMAKE_BUILD_TYPE
  bool sanitizers = false;        // -fsanitize in the flags
  bool profiler_recording = false;    // a profiler session is open during the measurement
  std::vector<std::string> warnings;  // what the above means for the figures, one line each
};

// Reads the load, the other processes' CPU use over `sample_ms` (0 skips it), the frequency
// settings and the build; fills `warnings`. Never throws: what cannot be read stays unknown.
Environment check_environment(int threads, int physical_cores, int logical_cpus,
                              int sample_ms = 200);

// The report's closing section, "warnings (kept in the JSON):" and one line each; "" when none.
std::string warnings_section(const Environment& env);

// Resident memory of this process (/proc/self/status): VmRSS now and VmHWM, its peak. -1 when
// unreadable (not Linux).
struct ResidentMemory {
  int64_t rss_bytes = -1;
  int64_t peak_bytes = -1;
};
ResidentMemory resident_memory();
// Resets VmHWM to the current RSS (writes 5 to /proc/self/clear_refs, Linux >= 4.0), so a later
// peak belongs to the work done after it. False when the kernel does not allow it.
bool reset_resident_peak();

}  // namespace prism::analysis
