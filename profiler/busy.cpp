#include "profiler/busy.h"

#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <sstream>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "profiler/first_line.h"

namespace prism::profiler {
namespace {

// pid -> (command name, CPU ticks so far) for every process but this one.
std::map<int, std::pair<std::string, int64_t>> process_ticks() {
  std::map<int, std::pair<std::string, int64_t>> out;
  DIR* dir = opendir("/proc");
  if (!dir) return out;
  const int self = static_cast<int>(getpid());
  while (const dirent* e = readdir(dir)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (*end != '\0' || pid <= 0 || pid == self) continue;
    const std::string stat = first_line(fmt::format("/proc/{}/stat", pid));
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split at the last ')'.
    const size_t open = stat.find('('), close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open) continue;
    std::istringstream rest(stat.substr(close + 2));
    std::string field;
    int64_t utime = 0, stime = 0;
    for (int i = 3; i <= 15 && rest >> field; ++i) {  // fields 14 and 15: utime, stime
      if (i == 14) utime = std::atoll(field.c_str());
      if (i == 15) stime = std::atoll(field.c_str());
    }
    out[static_cast<int>(pid)] = {stat.substr(open + 1, close - open - 1), utime + stime};
  }
  closedir(dir);
  return out;
}

}  // namespace

BusyProcesses busy_processes(int sample_ms, double min_share) {
  BusyProcesses busy;
  if (sample_ms <= 0) return busy;
  const auto before = process_ticks();
  std::this_thread::sleep_for(std::chrono::milliseconds(sample_ms));
  const auto after = process_ticks();
  const double ticks_per_s = static_cast<double>(sysconf(_SC_CLK_TCK));
  for (const auto& [pid, now] : after) {
    const auto it = before.find(pid);
    if (it == before.end()) continue;
    const double share =
        static_cast<double>(now.second - it->second.second) / ticks_per_s / (sample_ms / 1000.0);
    if (share >= min_share) {
      busy.names.push_back(fmt::format("{} (pid {}, {:.0f}%)", now.first, pid, 100 * share));
      busy.cpus += share;
    }
  }
  return busy;
}

}  // namespace prism::profiler
