// The registry of result views (result_views.h) and the one JSON reader of `prism report`.
#include "analysis/html/result_views.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "kernels/types.h"

namespace prism::analysis::html {
namespace {

std::map<std::string, BlockMaker>& views() {
  static std::map<std::string, BlockMaker> v;  // filled during static initialisation
  return v;
}

}  // namespace

ResultView::ResultView(const char* kind, BlockMaker make) {
  views()[kind] = make;
}

BlockMaker find_result_view(const std::string& kind) {
  const auto it = views().find(kind);
  return it == views().end() ? nullptr : it->second;
}

std::vector<std::string> result_view_kinds() {
  std::vector<std::string> kinds;
  for (const auto& [kind, make] : views()) kinds.push_back(kind);
  return kinds;
}

Block result_block(const std::string& name, const nlohmann::json& doc,
                   const std::function<RooflinePeaks(int threads)>& peaks_for) {
  if (doc.is_object() && doc.contains("kind") && doc["kind"].is_string()) {
    if (BlockMaker make = find_result_view(doc["kind"].get<std::string>())) return make(name, doc);
  }
  const ProfileData p = read_profile(doc);
  return profile_block(name, p, peaks_for(p.threads));
}

nlohmann::json load_json(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error(path + ": is a directory, not a file");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(path + ": cannot be read (" + std::string(std::strerror(errno)) + ")");
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string bytes = ss.str();
  if (bytes.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw Error(path + ": the file is empty, not a prism result");
  }
  try {
    return nlohmann::json::parse(bytes);
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann's text starts with "[json.exception.parse_error.101] "; the rest is the reason.
    std::string why = e.what();
    if (const size_t cut = why.find("] "); cut != std::string::npos) why = why.substr(cut + 2);
    if (e.byte >= bytes.size() || why.find("end of input") != std::string::npos) {
      throw Error(path +
                  ": not valid JSON: it ends before the JSON is complete (truncated?): " + why);
    }
    throw Error(path + ": not valid JSON: " + why);
  } catch (const nlohmann::json::exception& e) {  // a number past double's range (1e400)
    throw Error(path + ": not valid JSON: " + e.what());
  }
}

}  // namespace prism::analysis::html
