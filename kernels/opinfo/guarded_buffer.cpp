#include "kernels/opinfo/guarded_buffer.h"

#include <algorithm>
#include <bit>
#include <limits>

namespace prism::opinfo {
namespace {

// A signalling NaN (exponent all ones, quiet bit 22 clear) with the payload 0xbeef. Loads and
// stores keep it bit for bit; arithmetic on it returns a quiet NaN with the same payload.
constexpr uint32_t kFillBits = 0x7f80beef;
constexpr uint32_t kQuietBit = 0x00400000;
constexpr uint32_t kSignBit = 0x80000000;

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

GuardedBuffer::GuardedBuffer(int64_t n, int64_t guard)
    : n_(n),
      guard_(guard),
      storage_(static_cast<size_t>(n + 2 * guard), std::bit_cast<float>(kFillBits)) {}

float GuardedBuffer::fill_value() {
  return std::bit_cast<float>(kFillBits);
}

bool GuardedBuffer::guards_intact() const {
  const float* d = data();
  for (int64_t i = 1; i <= guard_; ++i) {
    if (!is_fill(d[-i]) || !is_fill(d[n_ + i - 1])) return false;
  }
  return true;
}

void GuardedBuffer::poison() {
  fill(std::bit_cast<float>(kFillBits));
}

void GuardedBuffer::poison_as_scratch() {
  fill(std::numeric_limits<float>::quiet_NaN());
}

void GuardedBuffer::fill(float value) {
  std::fill(data(), data() + n_, value);
}

BufferReport GuardedBuffer::inspect(const std::string& name, bool must_write) const {
  BufferReport r;
  r.name = name;
  r.size = n_;
  r.must_write = must_write;
  const float* d = data();
  for (int64_t i = -guard_; i < 0; ++i) {
    if (!is_fill(d[i])) {
      if (r.written_before == 0) r.lowest = i;
      ++r.written_before;
    }
  }
  for (int64_t i = n_; i < n_ + guard_; ++i) {
    if (!is_fill(d[i])) {
      ++r.written_after;
      r.highest = i;
    }
  }
  if (!must_write) return r;
  for (int64_t i = 0; i < n_; ++i) {
    if (is_fill(d[i])) {
      if (r.unwritten++ == 0) r.first_unwritten = i;
    } else if (carries_fill_payload(d[i])) {
      if (r.read_first++ == 0) r.first_read_first = i;
    }
  }
  return r;
}

}  // namespace prism::opinfo
