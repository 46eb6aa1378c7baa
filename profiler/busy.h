// Other processes busy on the CPUs right now: what a measurement taken now would share the
// machine with. `prism bench` warns about them (analysis/environment.h); the exercise checker
// does not grade speed while they run.
#pragma once

#include <string>
#include <vector>

namespace prism::profiler {

struct BusyProcesses {
  std::vector<std::string> names;  // "cc1plus (pid 12, 97%)", each using >= min_share of a CPU
  double cpus = 0;                 // the CPUs those processes used between them (0.97 + ...)
};

// The processes other than this one that used at least `min_share` of a CPU over `sample_ms`
// milliseconds (/proc/PID/stat, utime + stime, sampled before and after a sleep). Empty where
// /proc cannot be read. Never throws.
BusyProcesses busy_processes(int sample_ms, double min_share = 0.2);

}  // namespace prism::profiler
