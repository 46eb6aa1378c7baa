// The one set of JSON field readers of `prism report` (json_fields.h).
#include "analysis/html/json_fields.h"

#include <cmath>

#include "kernels/types.h"

namespace prism::analysis::html::fields {

void fail(const std::string& where, const std::string& what) {
  throw Error(where + ": " + what);
}

const nlohmann::json& field(const nlohmann::json& obj, const std::string& key,
                            const std::string& at) {
  if (!obj.is_object()) {
    fail(at.empty() ? "the document" : at.substr(0, at.size() - 1), "expected an object");
  }
  const auto it = obj.find(key);
  if (it == obj.end()) fail(at + key, "missing");
  return *it;
}

std::string text(const nlohmann::json& obj, const std::string& key, const std::string& at) {
  const nlohmann::json& v = field(obj, key, at);
  if (!v.is_string()) fail(at + key, "expected a string");
  return v.get<std::string>();
}

double as_number(const nlohmann::json& v, const std::string& where) {
  if (!v.is_number() || !std::isfinite(v.get<double>())) fail(where, "expected a number");
  return v.get<double>();
}

double number(const nlohmann::json& obj, const std::string& key, const std::string& at) {
  return as_number(field(obj, key, at), at + key);
}

int64_t count(const nlohmann::json& obj, const std::string& key, const std::string& at) {
  const nlohmann::json& v = field(obj, key, at);
  if (!v.is_number_integer() || v.get<int64_t>() < 0) fail(at + key, "expected a count (>= 0)");
  return v.get<int64_t>();
}

bool flag(const nlohmann::json& obj, const std::string& key, const std::string& at) {
  const nlohmann::json& v = field(obj, key, at);
  if (!v.is_boolean()) fail(at + key, "expected true or false");
  return v.get<bool>();
}

}  // namespace prism::analysis::html::fields
