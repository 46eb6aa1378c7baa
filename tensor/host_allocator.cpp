#include "tensor/host_allocator.h"

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

size_t env_limit_bytes() {
  const char* s = std::getenv("PRISM_HOST_CACHE_MB");
  if (!s || !*s) return size_t{1024} << 20;
  char* end = nullptr;
  const long long mb = std::strtoll(s, &end, 10);
  if (*end != '\0' || mb < 0) return size_t{1024} << 20;  // a bad value keeps the default
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
  size_t cached = 0;
  size_t limit = env_limit_bytes();
  bool enabled = env_enabled();
  int64_t hits = 0, misses = 0;
};

Cache& cache() {
  // Never destroyed: tensors in static storage may be freed after main() returns.
  static Cache* c = new Cache;
  return *c;
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
  if (nbytes >= kMinCachedBytes && c.enabled) {
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.free_lists.find(cls);
    if (it != c.free_lists.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
      c.cached -= cls;
      ++c.hits;
      return p;
    }
    ++c.misses;
  }
  return system_alloc(cls);
}

void release(void* p, size_t nbytes) {
  if (!p) return;
  const size_t cls = size_class(nbytes);
  Cache& c = cache();
  if (nbytes >= kMinCachedBytes && c.enabled) {
    std::lock_guard<std::mutex> lock(c.mu);
    if (c.cached + cls <= c.limit) {
      c.free_lists[cls].push_back(p);
      c.cached += cls;
      return;
    }
  }
  std::free(p);
}

Stats stats() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  return {static_cast<int64_t>(c.cached), c.hits, c.misses, c.enabled};
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
