// Reading a result's JSON for `prism report`, every error naming the field by its path, because
// the reader of the message has the file open beside it: "ops[3].self_ns: expected a number".
// `at` is the path up to the key with its dot ("ops[3].", "batches[0].", "" at the top);
// under("series[1]") makes one from a path without it.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace prism::analysis::html::fields {

// Throws prism::Error "WHERE: WHAT".
[[noreturn]] void fail(const std::string& where, const std::string& what);

inline std::string under(const std::string& path) {
  return path.empty() ? "" : path + ".";
}

// obj[key]; "AT KEY: missing", or "...: expected an object" when obj is not one.
const nlohmann::json& field(const nlohmann::json& obj, const std::string& key,
                            const std::string& at);
std::string text(const nlohmann::json& obj, const std::string& key, const std::string& at);
// A finite number.
double number(const nlohmann::json& obj, const std::string& key, const std::string& at);
// A whole number >= 0 (a count, a byte total).
int64_t count(const nlohmann::json& obj, const std::string& key, const std::string& at);
bool flag(const nlohmann::json& obj, const std::string& key, const std::string& at);
// The value itself as a finite number, `where` naming it ("points[2].value").
double as_number(const nlohmann::json& v, const std::string& where);

}  // namespace prism::analysis::html::fields
