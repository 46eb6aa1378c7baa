#include "kernels/opinfo/op_info.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace prism::opinfo {

void Case::prepare_validation() {
  for (Output& o : outputs()) o.buffer->poison();
}

uint64_t InputRng::next_u64() {
  // splitmix64 (Steele, Lea and Flood 2014): one add and two xor-shift-multiplies per number,
  // plenty for test inputs.
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

float InputRng::uniform(float low, float high) {
  // The top 24 bits give every float in [0, 1) with a 2^-24 step, exactly representable.
  const float u = static_cast<float>(next_u64() >> 40) * 0x1.0p-24f;
  return low + (high - low) * u;
}

CaseVector<float> InputRng::vector(int64_t n, float low, float high) {
  CaseVector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = uniform(low, high);
  return v;
}

std::vector<int64_t> parse_dims(const std::string& op, const std::string& syntax,
                                const std::string& text, size_t min_count, size_t max_count) {
  std::vector<int64_t> dims;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    int64_t v = 0;
    auto [next, ec] = std::from_chars(p, end, v);
    if (ec != std::errc() || v < 1 || v > (int64_t{1} << 40)) {
      dims.clear();
      break;
    }
    dims.push_back(v);
    p = next;
    if (p < end) {
      if (*p != 'x' || p + 1 == end) {
        dims.clear();
        break;
      }
      ++p;
    }
  }
  if (dims.size() < min_count || dims.size() > max_count) {
    throw Error("lab " + op + ": bad size '" + text + "': expected " + syntax +
                " (positive whole numbers joined by 'x')");
  }
  // The adapters multiply these sizes into buffer lengths: m k, a square n n, attention's
  // B H L L. Every such length is at most (product of the dims) x (largest dim), so bounding
  // that, with overflow checks, keeps every length and its bytes far inside int64 (unchecked,
  // 16777232x1099510579201 wrapped to a 16-element buffer and the kernel ran off its end).
  // Sizes that pass can still be too large for memory: the lab's allocator refuses those with
  // the figure (case_memory.h).
  constexpr int64_t kMaxLength = int64_t{1} << 56;
  int64_t bound = *std::max_element(dims.begin(), dims.end());
  bool overflow = false;
  for (int64_t d : dims) overflow = overflow || __builtin_mul_overflow(bound, d, &bound);
  if (overflow || bound > kMaxLength) {
    throw Error("lab " + op + ": size '" + text +
                "' is too large: its buffers could hold more than 2^56 elements");
  }
  return dims;
}

std::pair<std::string, std::string> split_suffix(const std::string& text) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos) return {text, ""};
  return {text.substr(0, colon), text.substr(colon + 1)};
}

OpInfo row_op_info(const char* name, const char* summary) {
  OpInfo op;
  op.op = name;
  op.size_syntax = kRowSyntaxT;
  op.summary = summary;
  op.default_sizes = {"128x10", "4096x1024", "1024x4096:t"};
  op.validation_sizes = {"1x1", "1x7", "7x1", "13x4099", "31x17:t", "5x1:t", "3x65536"};
  return op;
}

RowShape parse_row_shape(const std::string& op, const std::string& syntax, const std::string& size,
                         bool transposable) {
  auto [dims_text, form] = split_suffix(size);
  const auto d = parse_dims(op, syntax, dims_text, 2, 2);
  if (!form.empty() && !(transposable && form == "t")) {
    throw Error("lab " + op + ": bad form ':" + form + "' in '" + size + "': expected " + syntax);
  }
  return {d[0], d[1], form == "t"};
}

namespace {
struct Family {
  int rank;
  void (*add)(std::vector<OpInfo>&);
};
// Filled while the library loads, by each file's OpInfoFamily; read only after main starts.
std::vector<Family>& families() {
  static std::vector<Family> f;
  return f;
}
}  // namespace

OpInfoFamily::OpInfoFamily(int rank, void (*add)(std::vector<OpInfo>&)) {
  families().push_back({rank, add});
}

const std::vector<OpInfo>& op_infos() {
  static const std::vector<OpInfo> ops = [] {
    std::vector<Family> f = families();
    std::sort(f.begin(), f.end(), [](const Family& a, const Family& b) { return a.rank < b.rank; });
    std::vector<OpInfo> v;
    for (const Family& family : f) family.add(v);
    return v;
  }();
  return ops;
}

const OpInfo& find_op_info(const std::string& name) {
  std::string known;
  for (const OpInfo& op : op_infos()) {
    if (op.op == name) return op;
    known += (known.empty() ? "" : ", ") + op.op;
  }
  throw Error("lab: no lab for op '" + name + "' (the lab knows: " + known + ")");
}

std::map<char, int64_t> parse_size_params(const std::string& op, const std::string& syntax,
                                          const std::string& size, const std::string& text,
                                          const std::string& allowed) {
  std::map<char, int64_t> out;
  size_t i = 0;
  while (i < text.size()) {
    const char key = text[i++];
    size_t j = i;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
    if (allowed.find(key) == std::string::npos || j == i || j - i > 6) {
      throw Error("lab " + op + ": bad size '" + size + "': expected " + syntax);
    }
    out[key] = std::stoll(text.substr(i, j - i));
    i = j;
  }
  return out;
}

}  // namespace prism::opinfo
