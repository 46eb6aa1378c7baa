#include "cli/course.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kernels/types.h"
#include "profiler/machine.h"
#include "profiler/output_file.h"

namespace prism::cli::course {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The first Markdown heading ("# 03 · The roofline" gives "03 · The roofline"); the folder name
// when the README has none.
std::string title_of(const fs::path& readme, const std::string& fallback) {
  std::ifstream in(readme);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# ", 0) == 0) return line.substr(2);
  }
  return fallback;
}

// The numbered folders NN_name under `dir`, sorted (course order).
std::vector<std::string> numbered_folders(const fs::path& dir) {
  std::vector<std::string> ids;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string id = e.path().filename().string();
    if (e.is_directory() && id.size() > 3 && std::isdigit(static_cast<unsigned char>(id[0])) &&
        std::isdigit(static_cast<unsigned char>(id[1])) && id[2] == '_') {
      ids.push_back(id);
    }
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

// The exercise folders a README links to, in order: every "exercises/NN_name" in its text.
std::vector<std::string> exercise_links(const std::string& text) {
  const auto is_name = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  };
  const auto is_digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  const std::string prefix = "exercises/";
  std::vector<std::string> ids;
  for (size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at + 1)) {
    const size_t b = at + prefix.size();
    size_t e = b;
    while (e < text.size() && is_name(text[e])) ++e;
    if (e - b > 3 && is_digit(text[b]) && is_digit(text[b + 1]) && text[b + 2] == '_') {
      ids.push_back(text.substr(b, e - b));
    }
  }
  return ids;
}

// The running binary's directory (Linux: /proc/self/exe).
fs::path binary_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("cannot find where this prism binary is: " + ec.message());
  return exe.parent_path();
}

}  // namespace

Build find_build() {
  const fs::path dir = binary_dir();
  const fs::path marker = dir / "course" / "build.txt";
  std::ifstream in(marker);
  if (!in) {
    throw Error(fmt::format(
        "this prism runs from {}, which is not a build directory of prism (it has no "
        "course/build.txt): run the prism that `make build` or cmake built, e.g. build/prism",
        dir.string()));
  }
  Build b;
  b.build_dir = dir.string();
  std::string key, rest, line;
  while (std::getline(in, line)) {
    const size_t space = line.find(' ');
    if (space == std::string::npos) continue;
    key = line.substr(0, space);
    rest = line.substr(space + 1);
    if (key == "source") {
      b.source_dir = rest;
    } else if (key == "cmake") {
      b.cmake = rest;
    } else if (key == "exercise") {
      b.exercises.push_back(rest);
    } else if (key == "not_built") {
      const size_t s = rest.find(' ');
      b.not_built[rest.substr(0, s)] = s == std::string::npos ? "" : rest.substr(s + 1);
    }
  }
  if (b.source_dir.empty() || b.cmake.empty()) {
    throw Error(
        fmt::format("{} lacks its 'source' or 'cmake' line: configure the build again "
                    "(cmake -S . -B build)",
                    marker.string()));
  }
  return b;
}

std::vector<Exercise> exercises(const std::string& source_dir) {
  std::vector<Exercise> all;
  const fs::path root = fs::path(source_dir) / "exercises";
  for (const std::string& id : numbered_folders(root)) {
    Exercise e;
    e.id = id;
    e.name = id.substr(3);
    e.title = title_of(root / id / "README.md", id);
    for (const char* ext : {".cpp", ".cu"}) {
      const fs::path f = root / id / (e.name + ext);
      if (fs::exists(f)) {
        e.learner_file = "exercises/" + id + "/" + e.name + ext;
        e.todo = read_file(f).find("TODO(exercise)") != std::string::npos;
        break;
      }
    }
    all.push_back(e);
  }
  return all;
}

std::vector<Module> modules(const std::string& source_dir) {
  std::vector<Module> all;
  const fs::path root = fs::path(source_dir) / "modules";
  for (const std::string& id : numbered_folders(root)) {
    Module m;
    m.id = id;
    m.title = title_of(root / id / "README.md", id);
    for (const std::string& ex : exercise_links(read_file(root / id / "README.md"))) {
      if (std::find(m.exercises.begin(), m.exercises.end(), ex) == m.exercises.end()) {
        m.exercises.push_back(ex);
      }
    }
    all.push_back(m);
  }
  return all;
}

const Exercise* find_exercise(const std::vector<Exercise>& all, const std::string& name) {
  for (const Exercise& e : all) {
    if (name == e.name || name == e.id || name == e.id.substr(0, 2)) return &e;
  }
  return nullptr;
}

std::string progress_path(const Build& b) {
  const char* dir = std::getenv("PRISM_COURSE_DIR");
  const fs::path base = dir && *dir ? fs::path(dir) : fs::path(b.build_dir) / "course";
  return (base / "progress.json").string();
}

std::map<std::string, Record> load_progress(const std::string& path) {
  std::map<std::string, Record> records;
  if (!fs::exists(path)) return records;
  try {
    const nlohmann::json j = nlohmann::json::parse(read_file(path));
    for (const auto& [id, r] : j.at("exercises").items()) {
      Record rec;
      rec.result = r.at("result").get<std::string>();
      rec.tier = r.value("tier", 0);
      rec.tiers = r.value("tiers", 0);
      rec.best_tier = r.value("best_tier", 0);
      rec.next_tier = r.value("next_tier", "");
      rec.checked = r.value("checked", "");
      records[id] = rec;
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(
        fmt::format("{} is not a prism course progress file ({}); delete it to start "
                    "the record afresh",
                    path, e.what()));
  }
  return records;
}

void save_record(const std::string& path, const std::string& id, Record r) {
  std::map<std::string, Record> records = load_progress(path);
  if (const auto it = records.find(id); it != records.end()) {
    r.best_tier = std::max(r.best_tier, it->second.best_tier);
  }
  r.checked = profiler::utc_now_iso8601();
  records[id] = r;
  nlohmann::ordered_json j;
  j["exercises"] = nlohmann::ordered_json::object();
  for (const auto& [k, v] : records) {
    j["exercises"][k] = {{"result", v.result},       {"tier", v.tier},
                         {"tiers", v.tiers},         {"best_tier", v.best_tier},
                         {"next_tier", v.next_tier}, {"checked", v.checked}};
  }
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  profiler::write_text_file(path, j.dump(2) + "\n");
}

}  // namespace prism::cli::course
