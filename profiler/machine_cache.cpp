// The machine cache: one JSON file holding a measurement per build configuration,
//   {"format": "prism-machine-cache", "version": 1, "machines": {KEY: ENTRY, ...}}
// where ENTRY is machine_to_json's object. A file that cannot be parsed is never fatal: the
// reader reports it as a warning and the caller measures again and replaces it.
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profiler/machine.h"
#include "profiler/output_file.h"

namespace prism::profiler {

namespace {

using json = nlohmann::ordered_json;
namespace fs = std::filesystem;

constexpr const char* kFormat = "prism-machine-cache";
constexpr int kFormatVersion = 1;

json rate_json(const RateStats& r) {
  return json{{"best", r.best}, {"median", r.median}, {"worst", r.worst}, {"reps", r.reps}};
}

// The four fields rate_json writes (throws nlohmann's error on a missing or mistyped one).
RateStats stats_fields(const json& j) {
  RateStats r;
  r.best = j.at("best").get<double>();
  r.median = j.at("median").get<double>();
  r.worst = j.at("worst").get<double>();
  r.reps = j.at("reps").get<int>();
  return r;
}

// A measured rate is positive and its repetitions are ordered, 0 < worst <= median <= best:
// a cache that says otherwise was not written by us, and a zero or negative peak would print
// a ridge point of 0 or below and divide every "% of peak" by nothing.
RateStats rate_from(const json& j) {
  const RateStats r = stats_fields(j);
  if (!(r.worst > 0 && r.worst <= r.median && r.median <= r.best && std::isfinite(r.best)) ||
      r.reps < 1) {
    throw std::runtime_error("a rate must have 0 < worst <= median <= best and reps >= 1, got " +
                             j.dump());
  }
  return r;
}

// A cost (a region's microseconds): smaller is better, so 0 < best <= median <= worst; or all
// zero with no repetitions: not measured (always so at 1 thread, where there is no region).
RateStats cost_from(const json& j, int threads) {
  const RateStats r = stats_fields(j);
  if (r.best == 0 && r.median == 0 && r.worst == 0 && r.reps == 0) return r;
  if (threads < 2 ||
      !(r.best > 0 && r.best <= r.median && r.median <= r.worst && std::isfinite(r.worst)) ||
      r.reps < 1) {
    throw std::runtime_error(
        "a region cost must have 0 < best <= median <= worst and reps >= 1 (none at 1 "
        "thread), got " +
        j.dump());
  }
  return r;
}

// The cache levels in the order measure_machine measures them: a row's "levels" must follow it.
constexpr const char* kLevelNames[] = {"L1", "L2", "L3"};

json entry_json(const MachinePeak& m) {
  json rows = json::array();
  for (const ThreadLimits& t : m.rows) {
    json levels = json::array();
    for (const LevelRate& l : t.levels) {
      levels.push_back(json{{"level", l.level},
                            {"working_set_bytes", l.working_set_bytes},
                            {"gbps", rate_json(l.gbps)}});
    }
    rows.push_back(json{{"threads", t.threads},
                        {"fma_gflops", rate_json(t.fma_gflops)},
                        {"triad_gbps", rate_json(t.triad_gbps)},
                        {"copy_gbps", rate_json(t.copy_gbps)},
                        {"levels", std::move(levels)},
                        {"region_us", rate_json(t.region_us)},
                        {"region_idle_us", rate_json(t.region_idle_us)}});
  }
  return json{{"key", m.key},
              {"cpu_model", m.cpu_model},
              {"logical_cpus", m.logical_cpus},
              {"physical_cores", m.physical_cores},
              {"caches", {{"l1d", m.caches.l1d}, {"l2", m.caches.l2}, {"l3", m.caches.l3}}},
              {"simd", m.simd},
              {"compiler", m.compiler},
              {"flags", m.flags},
              {"measured_at", m.measured_at},
              {"load_avg", m.load_avg},
              {"clock", m.clock},
              {"stream_array_bytes", m.stream_array_bytes},
              {"rows", rows}};
}

// Row `row`'s "levels": L1, L2, L3 in that order (any of them may be missing: a cache of unknown
// size is not measured), each with a positive working set and rates. Throws std::runtime_error
// naming the row, the entry and what is wrong with it.
std::vector<LevelRate> levels_from(const json& levels, int row) {
  if (!levels.is_array()) {
    throw std::runtime_error("row " + std::to_string(row) + ": \"levels\" must be an array, got " +
                             levels.dump());
  }
  std::vector<LevelRate> out;
  size_t next_name = 0;  // levels must come in kLevelNames order, each at most once
  for (size_t i = 0; i < levels.size(); ++i) {
    const std::string where = "row " + std::to_string(row) + " level entry " + std::to_string(i);
    LevelRate l;
    try {
      l.level = levels[i].at("level").get<std::string>();
      l.working_set_bytes = levels[i].at("working_set_bytes").get<int64_t>();
      l.gbps = rate_from(levels[i].at("gbps"));
    } catch (const json::exception& e) {
      throw std::runtime_error(where + ": " + e.what());
    }
    while (next_name < std::size(kLevelNames) && l.level != kLevelNames[next_name]) ++next_name;
    if (next_name == std::size(kLevelNames)) {
      throw std::runtime_error(where + ": level \"" + l.level +
                               "\" is not L1, L2 or L3, or is out of order or repeated");
    }
    ++next_name;
    if (l.working_set_bytes <= 0 || !(l.gbps.best > 0)) {
      throw std::runtime_error(where + " (" + l.level +
                               "): working_set_bytes and gbps.best must be positive");
    }
    out.push_back(std::move(l));
  }
  return out;
}

MachinePeak entry_from(const json& j) {
  MachinePeak m;
  m.key = j.at("key").get<std::string>();
  m.cpu_model = j.at("cpu_model").get<std::string>();
  m.logical_cpus = j.at("logical_cpus").get<int>();
  m.physical_cores = j.at("physical_cores").get<int>();
  const json& c = j.at("caches");
  m.caches = {c.at("l1d").get<int64_t>(), c.at("l2").get<int64_t>(), c.at("l3").get<int64_t>()};
  m.simd = j.at("simd").get<std::string>();
  m.compiler = j.at("compiler").get<std::string>();
  m.flags = j.at("flags").get<std::string>();
  m.measured_at = j.at("measured_at").get<std::string>();
  m.load_avg = j.value("load_avg", -1.0);
  m.clock = j.value("clock", "");
  m.stream_array_bytes = j.at("stream_array_bytes").get<int64_t>();
  // Counts and sizes a measurement cannot have had (0 cache bytes = unknown, allowed).
  if (m.logical_cpus < 1 || m.physical_cores < 1 || m.stream_array_bytes < 1 || m.caches.l1d < 0 ||
      m.caches.l2 < 0 || m.caches.l3 < 0) {
    throw std::runtime_error(
        "logical_cpus, physical_cores and stream_array_bytes must be positive and the cache "
        "sizes 0 or more");
  }
  for (const json& r : j.at("rows")) {
    ThreadLimits t;
    t.threads = r.at("threads").get<int>();
    t.fma_gflops = rate_from(r.at("fma_gflops"));
    t.triad_gbps = rate_from(r.at("triad_gbps"));
    t.copy_gbps = rate_from(r.at("copy_gbps"));
    t.levels = levels_from(r.at("levels"), t.threads);
    t.region_us = cost_from(r.at("region_us"), t.threads);
    t.region_idle_us = cost_from(r.at("region_idle_us"), t.threads);
    // Rows are looked up as threads 1, 2, ..., N; anything else is not a file we wrote.
    if (t.threads != static_cast<int>(m.rows.size()) + 1) {
      throw std::runtime_error("rows must list threads 1, 2, ... in order");
    }
    m.rows.push_back(t);
  }
  return m;
}

// Parses the whole cache file; throws std::runtime_error saying what is wrong with it.
json parse_cache(const std::string& text) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    throw std::runtime_error(std::string("is not valid JSON (") + e.what() + ")");
  }
  // Compared as JSON values, so a field of the wrong type is a mismatch, not an exception.
  auto field = [&doc](const char* name) {
    return doc.is_object() && doc.contains(name) ? doc[name] : json();
  };
  if (field("format") != kFormat) {
    throw std::runtime_error(std::string("is not a prism machine cache (no \"format\": \"") +
                             kFormat + "\")");
  }
  if (field("version") != kFormatVersion) {
    throw std::runtime_error("has format version " + field("version").dump() +
                             ", this build reads version " + std::to_string(kFormatVersion));
  }
  if (!field("machines").is_object()) throw std::runtime_error("has no \"machines\" object");
  return doc;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

}  // namespace

std::string default_machine_cache_path() {
  if (const std::string p = env("PRISM_MACHINE_CACHE"); !p.empty()) return p;
  if (const std::string x = env("XDG_CACHE_HOME"); !x.empty()) {
    return (fs::path(x) / "prism" / "machine.json").string();
  }
  if (const std::string h = env("HOME"); !h.empty()) {
    return (fs::path(h) / ".cache" / "prism" / "machine.json").string();
  }
  return "";
}

std::string machine_to_json(const MachinePeak& m) {
  return entry_json(m).dump(2) + "\n";
}

MachinePeak machine_from_json(const std::string& text) {
  try {
    return entry_from(json::parse(text));
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string("machine JSON: ") + e.what());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string("machine JSON: ") + e.what());
  }
}

std::optional<MachinePeak> read_machine_cache(const std::string& path, const std::string& key,
                                              std::string* warning) {
  std::error_code ec;
  if (path.empty() || !fs::exists(path, ec)) return std::nullopt;
  std::string problem;
  try {
    // A directory would read as empty, and a device such as /dev/zero would be read forever.
    if (!fs::is_regular_file(path, ec)) throw std::runtime_error("is not a regular file");
    std::ifstream probe(path);
    if (!probe) {
      throw std::runtime_error(std::string("cannot be read (") + std::strerror(errno) + ")");
    }
    const json doc = parse_cache(read_text(path));
    const json& machines = doc.at("machines");
    const auto it = machines.find(key);
    if (it == machines.end()) return std::nullopt;
    try {
      return entry_from(*it);
    } catch (const std::exception& e) {  // json::exception or a row out of order
      problem = std::string("has a bad entry for this machine (") + e.what() + ")";
    }
  } catch (const std::exception& e) {
    problem = e.what();
  }
  if (warning) *warning = "machine cache " + path + " " + problem + "; measuring again";
  return std::nullopt;
}

void write_machine_cache(const std::string& path, const MachinePeak& m) {
  if (path.empty()) throw std::runtime_error("machine cache: no path (set PRISM_MACHINE_CACHE)");
  json doc{{"format", kFormat}, {"version", kFormatVersion}, {"machines", json::object()}};
  std::error_code ec;
  if (fs::exists(path, ec) && !fs::is_regular_file(path, ec)) {
    throw std::runtime_error("cannot write the machine cache " + path +
                             ": it is not a regular file");
  }
  if (fs::exists(path, ec)) {
    try {
      doc = parse_cache(read_text(path));  // keep the other builds' entries
    } catch (const std::runtime_error&) {
      // Unreadable: replaced by a fresh file (the reader has already warned about it).
    }
  }
  doc["machines"][m.key] = entry_json(m);

  const fs::path target(path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  // Atomically (output_file.h): a concurrent reader sees the old cache or the new one.
  write_text_file(path, doc.dump(2) + "\n");
}

}  // namespace prism::profiler
