// What this machine and this build are: CPU model, cores, caches, the SIMD path compiled in,
// compiler and flags. Read from Linux's /proc/cpuinfo and sysfs; anything unavailable stays
// "unknown" or 0 rather than failing, so `prism machine` works on any system.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <string>
#include <utility>

#include "profiler/build_info.h"
#include "profiler/first_line.h"
#include "profiler/machine.h"

namespace prism::profiler {

namespace {

// Bumped whenever the microkernels or what they count change, so cached figures measured the
// old way are not reused.
// 2: rates on per-thread CPU time; 3: the triad on sets in L1, L2 and L3 too.
constexpr int kMethodVersion = 4;  // 4: the cost of a parallel region

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

struct CpuInfo {
  std::string model;
  int cores = 0;  // distinct (physical id, core id) pairs; 0 when not listed
};

// /proc/cpuinfo lists "key : value" lines, one block per logical CPU.
CpuInfo read_cpuinfo() {
  CpuInfo info;
  std::ifstream in("/proc/cpuinfo");
  std::set<std::pair<std::string, std::string>> cores;
  std::string line, package;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trim(line.substr(0, colon));
    const std::string value = trim(line.substr(colon + 1));
    if (key == "model name" && info.model.empty()) info.model = value;
    if (key == "physical id") package = value;
    if (key == "core id") cores.emplace(package, value);
  }
  info.cores = static_cast<int>(cores.size());
  return info;
}

// sysfs writes cache sizes as "32K", "1024K" or "32M".
int64_t parse_size(const std::string& text) {
  size_t used = 0;
  int64_t v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    return 0;
  }
  const char unit = used < text.size() ? static_cast<char>(std::toupper(text[used])) : ' ';
  if (unit == 'K') return v << 10;
  if (unit == 'M') return v << 20;
  if (unit == 'G') return v << 30;
  return v;
}

std::string read_line(const std::string& path) {
  return trim(first_line(path));
}

// The kernel's cache description for CPU 0. Preferred over sysconf(_SC_LEVEL3_CACHE_SIZE),
// which glibc derives from cpuid and which a hypervisor can get badly wrong (it reports ten
// times the real L3 on the machine the figures in docs/PERFORMANCE.md come from).
CacheSizes read_sysfs_caches() {
  CacheSizes c;
  for (int i = 0; i < 16; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    const std::string level = read_line(dir + "level");
    if (level.empty()) break;
    const std::string type = read_line(dir + "type");
    const int64_t size = parse_size(read_line(dir + "size"));
    if (type == "Instruction") continue;
    if (level == "1") c.l1d = size;
    if (level == "2") c.l2 = size;
    if (level == "3") c.l3 = size;
  }
  return c;
}

CacheSizes read_caches() {
  CacheSizes c = read_sysfs_caches();
#ifdef _SC_LEVEL1_DCACHE_SIZE
  if (c.l1d == 0) c.l1d = std::max<long>(0, sysconf(_SC_LEVEL1_DCACHE_SIZE));
  if (c.l2 == 0) c.l2 = std::max<long>(0, sysconf(_SC_LEVEL2_CACHE_SIZE));
  if (c.l3 == 0) c.l3 = std::max<long>(0, sysconf(_SC_LEVEL3_CACHE_SIZE));
#endif
  return c;
}

}  // namespace

std::string simd_level() {
#if defined(__AVX512F__)
  return "AVX-512F (16 float lanes, 16 accumulators)";
#elif defined(__AVX2__) && defined(__FMA__)
  return "AVX2+FMA (8 float lanes, 12 accumulators)";
#else
  return "portable C++ (compiler-vectorized multiply-add, 64 accumulators)";
#endif
}

int64_t default_stream_array_bytes(const CacheSizes& caches) {
  constexpr int64_t kMin = int64_t{64} << 20, kMax = int64_t{1} << 30;
  return std::clamp(4 * caches.l3, kMin, kMax);
}

MachinePeak describe_machine() {
  MachinePeak m;
  const CpuInfo cpu = read_cpuinfo();
  m.cpu_model = cpu.model.empty() ? "unknown CPU" : cpu.model;
  m.logical_cpus = static_cast<int>(std::max<long>(1, sysconf(_SC_NPROCESSORS_ONLN)));
  m.physical_cores = cpu.cores > 0 ? cpu.cores : m.logical_cpus;
  m.caches = read_caches();
  m.simd = simd_level();
  m.compiler = build_info::kCompiler;
  m.flags = build_info::kFlags;
  m.key = m.cpu_model + " | " + m.compiler + " | " + m.flags + " | method " +
          std::to_string(kMethodVersion);
  return m;
}

}  // namespace prism::profiler
