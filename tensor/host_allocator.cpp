#include "tensor/host_allocator.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace prism::host_allocator {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

constexpr size_t kDefaultFloor = size_t{256} << 20;

size_t env_floor_bytes() {
  const char* s = std::getenv("PRISM_HOST_CACHE_MB");
  if (!s || !*s) return kDefaultFloor;
  char* end = nullptr;
  const long long mb = std::strtoll(s, &end, 10);
  if (*end != '\0' || mb < 0) return kDefaultFloor;  // a bad value keeps the default
  return static_cast<size_t>(mb) << 20;
}

bool env_enabled() {
  if (kSanitized) return false;
  const char* s = std::getenv("PRISM_HOST_CACHE");
  return !(s && std::string(s) == "0");
}

struct Cache {
  std::mutex mu;
  std::unordered_map<size_t, std::vector<void*>> free_lists;  // size class -> buffers
  size_t cached = 0;                                          // bytes in the free lists
  size_t live = 0;                                            // cacheable bytes handed out
  size_t peak_live = 0;                                       // the most `live` has been
  size_t floor = env_floor_bytes();
  bool enabled = env_enabled();
  int64_t hits = 0, misses = 0;
};

Cache& cache() {
  // Never destroyed: tensors in static storage may be freed after main() returns.
  static Cache* c = new Cache;
  return *c;
}

// The peak plus a quarter: at the moment of the peak some cached buffers are of sizes not
// asked for then (freed earlier in the step, wanted again later). With no slack those had to
// be freed at every peak and faulted in again at every step (GPT-2 small: a fifth of the step);
// a quarter is what its step needs (measured: 17% above the peak with an unbounded cache).
size_t bound_for_peak(const Cache& c, size_t peak_live) {
  return std::max(c.floor, peak_live + peak_live / 4);
}
size_t bound(const Cache& c) {
  return bound_for_peak(c, c.peak_live);
}

// Frees cached buffers until live + cached + `incoming` fit under the bound the peak will have
// once `incoming` is live (the caller holds the lock). The largest classes go first: fewest
// calls, and the small ones are the likeliest to be asked for again.
void trim_for(Cache& c, size_t incoming) {
  const size_t limit = bound_for_peak(c, std::max(c.peak_live, c.live + incoming));
  if (c.live + c.cached + incoming <= limit) return;
  std::vector<size_t> classes;
  for (const auto& [cls, list] : c.free_lists) {
    if (!list.empty()) classes.push_back(cls);
  }
  std::sort(classes.rbegin(), classes.rend());
  for (size_t cls : classes) {
    auto& list = c.free_lists[cls];
    while (!list.empty() && c.live + c.cached + incoming > limit) {
      std::free(list.back());
      list.pop_back();
      c.cached -= cls;
    }
  }
}

void* system_alloc(size_t bytes) {
  return std::aligned_alloc(kAlignment, bytes);
}

}  // namespace

size_t size_class(size_t nbytes) {
  const size_t aligned = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  if (nbytes < kMinCachedBytes) return aligned;
  // Eight classes per power of two: round up to a multiple of 1/8 of the power of two at or
  // below the size (e.g. 40 KiB -> steps of 4 KiB -> 40 KiB; 41 KiB -> 44 KiB).
  const size_t step = std::bit_floor(nbytes) / 8;
  return (nbytes + step - 1) / step * step;
}

void* allocate(size_t nbytes) {
  const size_t cls = size_class(nbytes);
  Cache& c = cache();
  if (nbytes < kMinCachedBytes || !c.enabled) return system_alloc(cls);
  {
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.free_lists.find(cls);
    if (it != c.free_lists.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
      c.cached -= cls;
      c.live += cls;
      c.peak_live = std::max(c.peak_live, c.live);
      ++c.hits;
      return p;
    }
    ++c.misses;
    // Make room first: the new buffer must fit under the bound beside what is held.
    trim_for(c, cls);
  }
  void* p = system_alloc(cls);
  if (p != nullptr) {
    // Counted only once it exists: a request the C library refused (a caught out-of-memory
    // error) must not leave live bytes, or a peak, that were never held.
    std::lock_guard<std::mutex> lock(c.mu);
    c.live += cls;
    c.peak_live = std::max(c.peak_live, c.live);
  }
  return p;
}

void release(void* p, size_t nbytes) {
  if (!p) return;
  const size_t cls = size_class(nbytes);
  Cache& c = cache();
  if (nbytes >= kMinCachedBytes && c.enabled) {
    std::lock_guard<std::mutex> lock(c.mu);
    // Moving a buffer from live to cached leaves live + cached as it was, under the bound.
    c.live -= cls;
    c.free_lists[cls].push_back(p);
    c.cached += cls;
    return;
  }
  std::free(p);
}

Stats stats() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  Stats s;
  s.cached_bytes = static_cast<int64_t>(c.cached);
  s.hits = c.hits;
  s.misses = c.misses;
  s.enabled = c.enabled;
  s.live_bytes = static_cast<int64_t>(c.live);
  s.peak_live_bytes = static_cast<int64_t>(c.peak_live);
  s.bound_bytes = static_cast<int64_t>(bound(c));
  return s;
}

void empty_cache() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  for (auto& [cls, list] : c.free_lists) {
    for (void* p : list) std::free(p);
    list.clear();
  }
  c.cached = 0;
}

}  // namespace prism::host_allocator
