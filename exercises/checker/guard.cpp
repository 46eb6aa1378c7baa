#include "exercises/checker/guard.h"

#include <algorithm>
#include <bit>

namespace prism::exercises {
namespace {

// A signalling NaN (exponent all ones, quiet bit 22 clear) with the payload 0xbeef. Loads and
// stores keep it bit for bit; arithmetic on it returns a quiet NaN with the same payload.
constexpr uint32_t kFillBits = 0x7f80beef;
constexpr uint32_t kQuietBit = 0x00400000;
constexpr uint32_t kSignBit = 0x80000000;
constexpr uint32_t kScratchBits = 0x7fc00000;  // the default quiet NaN

uint32_t bits_of(float x) {
  return std::bit_cast<uint32_t>(x);
}

bool is_fill(float x) {
  return bits_of(x) == kFillBits;
}

// The fill value after arithmetic: the same payload, quieted, either sign.
bool carries_fill_payload(float x) {
  return (bits_of(x) & ~(kQuietBit | kSignBit)) == kFillBits;
}

}  // namespace

GuardedBuffer::GuardedBuffer(int64_t size, bool must_write)
    : size_(size),
      guard_(std::max<int64_t>(int64_t{1} << 16, 2 * size)),
      storage_(static_cast<size_t>(size + 2 * guard_), std::bit_cast<float>(kFillBits)) {
  // Scratch space gets an ordinary NaN instead: a kernel that reads scratch it never wrote
  // (stale patches, say) then computes NaNs, as it would compute garbage from real memory.
  if (!must_write) std::fill(data(), data() + size_, std::bit_cast<float>(kScratchBits));
}

BufferReport GuardedBuffer::inspect(const std::string& name, bool must_write) const {
  BufferReport r;
  r.name = name;
  r.size = size_;
  r.must_write = must_write;
  const float* d = storage_.data() + guard_;
  for (int64_t i = -guard_; i < 0; ++i) {
    if (!is_fill(d[i])) {
      if (r.written_before == 0) r.lowest = i;
      ++r.written_before;
    }
  }
  for (int64_t i = size_; i < size_ + guard_; ++i) {
    if (!is_fill(d[i])) {
      ++r.written_after;
      r.highest = i;
    }
  }
  if (!must_write) return r;
  for (int64_t i = 0; i < size_; ++i) {
    if (is_fill(d[i])) {
      if (r.unwritten++ == 0) r.first_unwritten = i;
    } else if (carries_fill_payload(d[i])) {
      if (r.read_first++ == 0) r.first_read_first = i;
    }
  }
  return r;
}

std::vector<BufferSlot> written_buffers(kernels::UnaryArgs<float>& a) {
  return {{&a.out, a.numel, "out", true}};
}

std::vector<BufferSlot> written_buffers(kernels::ReduceArgs<float>& a) {
  if (!a.out) return {};
  return {{&a.out, a.outer, "out", true}};
}

std::vector<BufferSlot> written_buffers(kernels::MatmulArgs<float>& a) {
  return {{&a.c, a.batch * a.m * a.n, "C", true}};
}

std::vector<BufferSlot> written_buffers(kernels::SoftmaxArgs<float>& a) {
  return {{&a.out, a.rows * a.cols, "out", true}};
}

std::vector<BufferSlot> written_buffers(kernels::Conv2dArgs<float>& a) {
  std::vector<BufferSlot> s = {{&a.out, a.n * a.o * a.ho * a.wo, "out", true}};
  if (a.workspace) s.push_back({&a.workspace, a.workspace_size, "workspace", false});
  return s;
}

}  // namespace prism::exercises
