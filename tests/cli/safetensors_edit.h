// Tampering with a safetensors file the way a hostile user would, for tests: change a metadata
// value (the header is re-serialised and re-padded, the data left as it is, so the file stays
// well-formed) or one float32 element of a tensor in place.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace prism::cli_test {

struct SafetensorsParts {
  nlohmann::json header;
  std::string data;  // everything after the header
};

inline SafetensorsParts split_safetensors(const std::string& bytes) {
  if (bytes.size() < 8) throw std::runtime_error("not a safetensors file");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  return {nlohmann::json::parse(bytes.substr(8, n)), bytes.substr(8 + n)};
}

inline std::string join_safetensors(const SafetensorsParts& p) {
  std::string header = p.header.dump();
  while ((8 + header.size()) % 8 != 0) header += ' ';
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i, n >>= 8) out[static_cast<size_t>(i)] = static_cast<char>(n & 0xff);
  return out + header + p.data;
}

// The file with metadata `key` set to `value`.
inline std::string with_metadata(const std::string& bytes, const std::string& key,
                                 const std::string& value) {
  SafetensorsParts p = split_safetensors(bytes);
  p.header["__metadata__"][key] = value;
  return join_safetensors(p);
}

// The file with element `index` of float32 tensor `name` set to `value`.
inline std::string with_f32(const std::string& bytes, const std::string& name, int64_t index,
                            float value) {
  SafetensorsParts p = split_safetensors(bytes);
  const auto& t = p.header.at(name);
  if (t.at("dtype") != "F32") throw std::runtime_error(name + " is not F32");
  const auto begin = t.at("data_offsets")[0].get<int64_t>();
  std::memcpy(&p.data[static_cast<size_t>(begin + 4 * index)], &value, 4);
  return join_safetensors(p);
}

}  // namespace prism::cli_test
