// The memory tracker: every Storage allocation and free goes through here.
//
// It keeps, per device, the live bytes, the peak, and running totals, and per role (parameter,
// gradient, activation, ...) the live bytes. Totals are atomics so a data-loading thread can
// allocate too. For attribution to ops each thread also counts its own allocations; an op
// record snapshots that count when it opens and closes (see recorder.h).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace prism::profiler {

// What a buffer is for. Set when the tensor is created (DESIGN.md, Conventions).
enum class MemRole : uint8_t {
  activation,  // op outputs, kept or not: the default
  temporary,   // scratch made and freed inside one op or one step
  parameter,
  gradient,
  optimizer,  // optimizer state (momentum, Adam moments)
  data,       // inputs and labels coming from a data set
  kv_cache,   // keys and values kept between decoding steps of a transformer
};
constexpr int kNumRoles = 7;
const char* role_name(MemRole r);

constexpr int kNumDevices = 3;  // 0 = cpu, 1 = cuda, 2 = meta (indices: profiler/ knows no tensors)

struct MemoryStats {
  int64_t live_bytes = 0;
  int64_t peak_bytes = 0;
  int64_t alloc_count = 0;  // allocations since process start
  int64_t alloc_bytes = 0;  // bytes allocated since process start
  int64_t free_count = 0;
  std::array<int64_t, kNumRoles> live_by_role{};
  // What the live bytes were made of when peak_bytes was reached (sums to peak_bytes): which
  // roles to shrink to lower the peak. Exact when one thread allocates; with several (a data
  // loader thread) each role is read just after the peak was set, so it may be off by one
  // concurrent buffer.
  std::array<int64_t, kNumRoles> peak_by_role{};
};

// Called by the tensor layer's allocator. Both are thread-safe.
void note_alloc(int device, MemRole role, int64_t bytes);
void note_free(int device, MemRole role, int64_t bytes);

// Moves a live buffer's bytes from one role to another (no allocation is counted).
void note_retag(int device, MemRole from, MemRole to, int64_t bytes);

MemoryStats memory_stats(int device = 0);
// Sets the peak back to the current live bytes, so a later region's peak can be read alone.
void reset_peak(int device = 0);

// This thread's running allocation count and bytes (all devices): what op records diff.
struct ThreadAllocCounter {
  int64_t count = 0;
  int64_t bytes = 0;
};
const ThreadAllocCounter& thread_allocs();

}  // namespace prism::profiler
