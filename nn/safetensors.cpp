#include "nn/safetensors.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>
#include <vector>

#include "profiler/output_file.h"
#include "tensor/autograd/anomaly.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/ops.h"

namespace prism::nn {

// The file stores little-endian bytes and we copy tensor memory as is.
static_assert(std::endian::native == std::endian::little,
              "safetensors I/O assumes a little-endian machine");

namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

// Like the reference implementation: a header above this is refused before it is parsed, so a
// corrupt length cannot make us allocate or parse gigabytes.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

const char* dtype_tag(DType t) {
  switch (t) {
    case DType::f32:
      return "F32";
    case DType::f64:
      return "F64";
    case DType::i64:
      return "I64";
    case DType::bf16:
      return "BF16";
    case DType::i8:
      return "I8";
    case DType::i32:
      return "I32";
  }
  return "?";
}

bool parse_dtype(const std::string& tag, DType& out) {
  if (tag == "F32")
    out = DType::f32;
  else if (tag == "F64")
    out = DType::f64;
  else if (tag == "I64")
    out = DType::i64;
  else if (tag == "BF16")
    out = DType::bf16;
  else if (tag == "I8")
    out = DType::i8;
  else if (tag == "I32")
    out = DType::i32;
  else
    return false;
  return true;
}

std::string shape_str(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(s[i]);
  }
  return out + "]";
}

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw Error("safetensors '" + path + "': " + what);
}
[[noreturn]] void fail_tensor(const std::string& path, const std::string& name,
                              const std::string& what) {
  fail(path, "tensor '" + name + "': " + what);
}

// The first byte of a contiguous cpu tensor's data.
const char* bytes_of(const Tensor& c) {
  return static_cast<const char*>(c.storage()->data()) + c.offset() * c.element_size();
}

// One tensor's header entry, checked against the file's data section.
struct Entry {
  std::string name;
  std::string dtype_tag;
  bool known_dtype = false;
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;
};

struct ParsedFile {
  std::vector<char> bytes;
  size_t data_start = 0;  // 8 + header length
  std::vector<Entry> entries;
  Metadata metadata;
  const char* data() const { return bytes.data() + data_start; }
};

std::vector<char> read_all(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) fail(path, "no such file");
  if (!fs::is_regular_file(path, ec)) fail(path, "not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot open for reading");
  const auto size = fs::file_size(path, ec);
  if (ec) fail(path, "cannot read its size: " + ec.message());
  std::vector<char> bytes(static_cast<size_t>(size));
  if (size > 0 && !in.read(bytes.data(), static_cast<std::streamsize>(size))) {
    fail(path, "read failed");
  }
  return bytes;
}

uint64_t as_offset(const json& v) {
  // Non-negative integers only: nlohmann stores those as unsigned.
  return v.is_number_unsigned() ? v.get<uint64_t>() : UINT64_MAX;
}

Entry parse_entry(const std::string& path, const std::string& name, const json& v,
                  uint64_t data_size) {
  Entry e;
  e.name = name;
  if (!v.is_object()) fail_tensor(path, name, "header entry is not a JSON object");
  if (!v.contains("dtype") || !v["dtype"].is_string()) {
    fail_tensor(path, name, "missing or non-string \"dtype\"");
  }
  e.dtype_tag = v["dtype"].get<std::string>();
  e.known_dtype = parse_dtype(e.dtype_tag, e.dtype);

  if (!v.contains("shape") || !v["shape"].is_array()) {
    fail_tensor(path, name, "missing or non-array \"shape\"");
  }
  for (const json& d : v["shape"]) {
    if (!d.is_number_unsigned() || d.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      fail_tensor(path, name, "shape entry " + d.dump() + " is not a non-negative integer");
    }
    e.shape.push_back(static_cast<int64_t>(d.get<uint64_t>()));
  }
  if (!v.contains("data_offsets") || !v["data_offsets"].is_array() ||
      v["data_offsets"].size() != 2) {
    fail_tensor(path, name, "missing \"data_offsets\" [begin, end]");
  }
  e.begin = as_offset(v["data_offsets"][0]);
  e.end = as_offset(v["data_offsets"][1]);
  if (e.begin > e.end || e.end > data_size) {
    fail_tensor(path, name,
                "data_offsets " + v["data_offsets"].dump() + " lie outside the data section (" +
                    std::to_string(data_size) + " bytes)");
  }
  if (e.known_dtype) {
    // An absurd shape must not wrap around to a small byte count: the one checked helper.
    const int64_t bytes =
        checked_shape_size(e.shape.data(), static_cast<int>(e.shape.size()), dtype_size(e.dtype),
                           "safetensors '" + path + "': tensor '" + name + "'")
            .nbytes;
    if (static_cast<uint64_t>(bytes) != e.end - e.begin) {
      fail_tensor(path, name,
                  "data_offsets " + v["data_offsets"].dump() + " span " +
                      std::to_string(e.end - e.begin) + " bytes, but " + e.dtype_tag + " " +
                      shape_str(e.shape) + " holds " + std::to_string(bytes) + " bytes");
    }
  }
  return e;
}

// The tensors' byte ranges must tile the data section: in offset order (the header's key order
// is free, as in the reference implementation), each starts where the previous one ended, and
// the last ends at the end of the file. An overlap means two tensors share bytes, a gap or a
// tail means bytes no tensor owns: each is a corrupt or hand-edited file, refused by name.
void check_layout(const std::string& path, const std::vector<Entry>& entries, uint64_t data_size) {
  std::vector<const Entry*> by_offset;
  for (const Entry& e : entries) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(), [](const Entry* a, const Entry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t at = 0;
  const Entry* previous = nullptr;
  for (const Entry* e : by_offset) {
    if (e->begin < at) {
      fail_tensor(path, e->name,
                  "bytes [" + std::to_string(e->begin) + ", " + std::to_string(e->end) +
                      ") overlap tensor '" + previous->name + "' [" +
                      std::to_string(previous->begin) + ", " + std::to_string(previous->end) + ")");
    }
    if (e->begin > at) {
      fail_tensor(path, e->name,
                  "starts at byte " + std::to_string(e->begin) +
                      ", but the data before it ends at " + std::to_string(at) + ": " +
                      std::to_string(e->begin - at) + " bytes belong to no tensor");
    }
    at = e->end;
    previous = e;
  }
  if (at != data_size) {
    fail(path, std::to_string(data_size - at) + " trailing bytes after the last tensor (the data " +
                   "section has " + std::to_string(data_size) + " bytes, the tensors " +
                   std::to_string(at) + ")");
  }
}

ParsedFile parse_file(const std::string& path) {
  ParsedFile f;
  f.bytes = read_all(path);
  const uint64_t size = f.bytes.size();
  if (size < 8) {
    fail(path,
         "file is " + std::to_string(size) + " bytes, too short for the 8-byte header length");
  }
  uint64_t n = 0;
  std::memcpy(&n, f.bytes.data(), 8);  // little-endian, as asserted above
  if (n > size - 8) {
    fail(path, "header length " + std::to_string(n) + " is larger than the rest of the file (" +
                   std::to_string(size - 8) + " bytes): truncated or not a safetensors file");
  }
  if (n > kMaxHeaderBytes) fail(path, "header length " + std::to_string(n) + " exceeds 100 MB");
  f.data_start = static_cast<size_t>(8 + n);
  const uint64_t data_size = size - 8 - n;

  // A JSON object may repeat a key and a parser keeps one value silently: in a checkpoint that
  // is two tensors under one name, or an entry with two dtypes. So every key of every object is
  // seen here, before that happens (one set of keys per open object).
  std::vector<std::set<std::string>> open_objects;
  std::string duplicate;
  int duplicate_depth = 0;
  const json::parser_callback_t on_key = [&](int depth, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) open_objects.emplace_back();
    if (event == json::parse_event_t::object_end && !open_objects.empty()) open_objects.pop_back();
    if (event == json::parse_event_t::key && !open_objects.empty() && duplicate.empty() &&
        !open_objects.back().insert(parsed.get<std::string>()).second) {
      duplicate = parsed.get<std::string>();
      duplicate_depth = depth;
    }
    return true;
  };
  json header;
  try {
    header = json::parse(f.bytes.data() + 8, f.bytes.data() + 8 + n, on_key);
  } catch (const json::exception& e) {
    fail(path, std::string("header is not valid JSON: ") + e.what());
  }
  if (!duplicate.empty()) {
    fail(path, duplicate_depth == 1
                   ? "the header names tensor '" + duplicate + "' twice"
                   : "the header repeats the key '" + duplicate + "' inside one object");
  }
  if (!header.is_object()) fail(path, "header is not a JSON object");

  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (!it.value().is_object()) fail(path, "\"__metadata__\" is not a JSON object");
      for (auto m = it.value().begin(); m != it.value().end(); ++m) {
        if (!m.value().is_string()) fail(path, "metadata '" + m.key() + "' is not a string");
        f.metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    f.entries.push_back(parse_entry(path, it.key(), it.value(), data_size));
  }
  check_layout(path, f.entries, data_size);
  return f;
}

// Refuses non-finite values unless allowed: a checkpoint with a NaN in it comes from a run that
// diverged, and training or evaluating from it only spreads the NaN. The scan is the one
// `prism train` runs over gradients (autograd::count_non_finite).
void check_finite(const std::string& path, const std::string& name, const Tensor& t,
                  NonFinite policy, const char* action) {
  if (policy == NonFinite::allow) return;
  int64_t first = -1;
  double value = 0;
  const int64_t count = autograd::count_non_finite(t, &first, &value);
  if (count == 0) return;
  fail_tensor(path, name,
              std::to_string(count) + " of its " + std::to_string(t.numel()) +
                  " values are not finite (the first, at flat index " + std::to_string(first) +
                  ", is " +
                  (std::isnan(value) ? "nan"
                   : value > 0       ? "inf"
                                     : "-inf") +
                  "); refusing to " + action +
                  " a checkpoint of a run that diverged (NonFinite::allow, or prism train "
                  "--allow-non-finite, to do it anyway)");
}

// A fresh cpu tensor holding an entry's bytes (the entry is known valid).
Tensor make_tensor(const ParsedFile& f, const Entry& e) {
  Tensor t = empty(Dims(e.shape), e.dtype);
  if (t.nbytes() > 0) std::memcpy(t.storage()->data(), f.data() + e.begin, e.end - e.begin);
  return t;
}

}  // namespace

void save_safetensors(const NamedTensors& tensors, const std::string& path,
                      const Metadata& metadata, NonFinite non_finite) {
  NoGrad no_grad;
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::vector<Tensor> data;
  std::set<std::string> names;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    if (name.empty() || name == "__metadata__") fail_tensor(path, name, "reserved name");
    if (!names.insert(name).second) fail_tensor(path, name, "saved twice");
    if (!t.defined()) fail_tensor(path, name, "undefined tensor");
    if (t.device() != Device::cpu) {
      fail_tensor(
          path, name,
          std::string("is on ") + device_name(t.device()) + "; only cpu tensors can be saved");
    }
    Tensor c = t.contiguous();
    check_finite(path, name, c, non_finite, "save");
    const uint64_t nbytes = static_cast<uint64_t>(c.nbytes());
    header[name] = {{"dtype", dtype_tag(c.dtype())},
                    {"shape", c.shape().vec()},
                    {"data_offsets", {offset, offset + nbytes}}};
    offset += nbytes;
    data.push_back(c);
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::json::exception& e) {  // names and metadata must be valid UTF-8
    fail(path, std::string("cannot encode the header: ") + e.what());
  }
  // Pad with spaces (valid JSON whitespace) so the data section starts 8-byte aligned.
  text.append((8 - (8 + text.size()) % 8) % 8, ' ');
  const uint64_t n = text.size();

  // Atomically (profiler/output_file.h): a failed or killed save never leaves half a checkpoint
  // under the name, and a FIFO or a device is refused, not replaced.
  try {
    profiler::write_output_file(
        path,
        [&](std::FILE* out) {
          bool ok = std::fwrite(&n, 8, 1, out) == 1 && std::fwrite(text.data(), 1, n, out) == n;
          for (const Tensor& c : data) {
            const size_t bytes = static_cast<size_t>(c.nbytes());
            if (ok && bytes > 0) ok = std::fwrite(bytes_of(c), 1, bytes, out) == bytes;
          }
          return ok;
        },
        profiler::OutputKind::file);
  } catch (const std::runtime_error& e) {
    fail(path, e.what());
  }
}

void save_safetensors(const Module& module, const std::string& path, const Metadata& metadata,
                      NonFinite non_finite) {
  save_safetensors(module.named_state(), path, metadata, non_finite);
}

NamedTensors read_safetensors(const std::string& path, Metadata* metadata, NonFinite non_finite) {
  const ParsedFile f = parse_file(path);
  NamedTensors out;
  for (const Entry& e : f.entries) {
    if (!e.known_dtype) {
      fail_tensor(path, e.name, "dtype '" + e.dtype_tag + "' is not supported (F32, F64, I64)");
    }
    if (e.shape.size() > static_cast<size_t>(Dims::kMax)) {
      fail_tensor(path, e.name, "has more than " + std::to_string(Dims::kMax) + " dims");
    }
  }
  for (const Entry& e : f.entries) {
    out.emplace_back(e.name, make_tensor(f, e));
    check_finite(path, e.name, out.back().second, non_finite, "load");
  }
  if (metadata) *metadata = f.metadata;
  return out;
}

namespace {

// The file's entry for every tensor of `state`, in state's order, once each has the module's
// name, dtype and shape (and, when `need_cpu`, the module's tensor is a cpu leaf that can adopt
// new values); with `strict`, no entry the module does not have. Throws Error naming the file
// and the tensor otherwise.
std::vector<const Entry*> match_state(const ParsedFile& f, const NamedTensors& state,
                                      const std::string& path, bool strict, bool need_cpu) {
  std::unordered_map<std::string, const Entry*> by_name;
  for (const Entry& e : f.entries) by_name[e.name] = &e;
  std::vector<const Entry*> sources;
  std::set<std::string> wanted;
  for (const auto& [name, t] : state) {
    wanted.insert(name);
    auto it = by_name.find(name);
    if (it == by_name.end()) fail_tensor(path, name, "missing from the file");
    const Entry& e = *it->second;
    if (!e.known_dtype || e.dtype != t.dtype()) {
      fail_tensor(
          path, name,
          "dtype is " + e.dtype_tag + " in the file, the module has " + dtype_tag(t.dtype()));
    }
    if (e.shape != t.shape().vec()) {
      fail_tensor(
          path, name,
          "shape is " + shape_str(e.shape) + " in the file, the module has " + t.shape().str());
    }
    if (need_cpu && t.device() != Device::cpu) {
      fail_tensor(path, name,
                  std::string("the module's tensor is on ") + device_name(t.device()) +
                      "; load into a cpu module");
    }
    if (need_cpu && !t.is_leaf()) fail_tensor(path, name, "the module's tensor is not a leaf");
    sources.push_back(&e);
  }
  if (strict) {
    for (const Entry& e : f.entries) {
      if (!wanted.count(e.name)) {
        fail_tensor(path, e.name,
                    "is in the file but not in the module (load with strict = false to ignore)");
      }
    }
  }
  return sources;
}

}  // namespace

void check_safetensors_fit(const Module& module, const std::string& path, bool strict,
                           Metadata* metadata) {
  const ParsedFile f = parse_file(path);
  match_state(f, module.named_state(), path, strict, /*need_cpu=*/false);
  if (metadata) *metadata = f.metadata;
}

int64_t safetensors_tensor_count(const std::string& path, Metadata* metadata) {
  const ParsedFile f = parse_file(path);
  if (metadata) *metadata = f.metadata;
  return static_cast<int64_t>(f.entries.size());
}

void load_safetensors(Module& module, const std::string& path, bool strict, NonFinite non_finite) {
  const ParsedFile f = parse_file(path);
  // 1. Validate everything: nothing is touched until the whole file is known good.
  const NamedTensors state = module.named_state();
  const std::vector<const Entry*> sources = match_state(f, state, path, strict, /*need_cpu=*/true);

  // 2. Copy into fresh tensors (the only step that allocates) and check their values, the last
  // checks that can fail, 3. then let the module's handles adopt them.
  std::vector<Tensor> fresh;
  fresh.reserve(sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    fresh.push_back(make_tensor(f, *sources[i]));
    check_finite(path, state[i].first, fresh.back(), non_finite, "load");
  }
  for (size_t i = 0; i < state.size(); ++i) assign(state[i].second, fresh[i]);
}

}  // namespace prism::nn
