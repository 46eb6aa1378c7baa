#include "kernels/lab/guarded_buffer.h"

#include <bit>
#include <cstring>
#include <limits>

namespace prism::lab {
namespace {

// A signalling-NaN bit pattern with a distinctive payload: no float arithmetic yields it
// (operations on NaNs return quiet NaNs), so finding it intact proves the guard was not written.
constexpr uint32_t kSentinelBits = 0x7f80dead;

float sentinel() {
  return std::bit_cast<float>(kSentinelBits);
}

}  // namespace

GuardedBuffer::GuardedBuffer(int64_t n)
    : n_(n), storage_(static_cast<size_t>(n + 2 * kGuard), sentinel()) {}

bool GuardedBuffer::guards_intact() const {
  for (int64_t i = 0; i < kGuard; ++i) {
    if (std::bit_cast<uint32_t>(storage_[i]) != kSentinelBits) return false;
    if (std::bit_cast<uint32_t>(storage_[kGuard + n_ + i]) != kSentinelBits) return false;
  }
  return true;
}

void GuardedBuffer::poison() {
  fill(std::numeric_limits<float>::quiet_NaN());
}

void GuardedBuffer::fill(float value) {
  for (int64_t i = 0; i < n_; ++i) storage_[kGuard + i] = value;
}

}  // namespace prism::lab
