// The caching host allocator: size classes, reuse of freed buffers, alignment, and the limit.
#include <doctest/doctest.h>

#include <cstdint>

#include "tensor/host_allocator.h"
#include "tensor/ops.h"

namespace ha = prism::host_allocator;

TEST_CASE("host allocator: size classes waste at most an eighth and never shrink a request") {
  CHECK(ha::size_class(1) == 64);
  CHECK(ha::size_class(64) == 64);
  CHECK(ha::size_class(65) == 128);
  CHECK(ha::size_class(ha::kMinCachedBytes) == ha::kMinCachedBytes);
  CHECK(ha::size_class(40 * 1024) == 40 * 1024);
  CHECK(ha::size_class(41 * 1024) == 44 * 1024);
  for (size_t n = ha::kMinCachedBytes; n < (size_t{64} << 20); n = n * 3 / 2 + 17) {
    const size_t c = ha::size_class(n);
    CHECK(c >= n);
    CHECK(static_cast<double>(c - n) <= static_cast<double>(n) / 8 + 64);
    CHECK(c % 64 == 0);
  }
}

TEST_CASE("host allocator: buffers are 64-byte aligned and a freed buffer is reused") {
  void* a = ha::allocate(100'000);
  REQUIRE(a != nullptr);
  CHECK(reinterpret_cast<uintptr_t>(a) % 64 == 0);
  void* small = ha::allocate(10);
  CHECK(reinterpret_cast<uintptr_t>(small) % 64 == 0);
  ha::release(small, 10);
  const ha::Stats before = ha::stats();
  ha::release(a, 100'000);
  void* b = ha::allocate(99'000);  // same size class as 100,000 bytes
  const ha::Stats after = ha::stats();
  if (before.enabled) {
    CHECK(b == a);
    CHECK(after.hits == before.hits + 1);
  } else {
    CHECK(after.hits == 0);  // sanitizer builds and PRISM_HOST_CACHE=0 never cache
  }
  ha::release(b, 99'000);
  ha::empty_cache();
  CHECK(ha::stats().cached_bytes == 0);
}

TEST_CASE("host allocator: tensors of a training step reuse buffers, and values are not stale") {
  ha::empty_cache();
  // A freed buffer handed out again still holds its old bytes; every op overwrites its output,
  // and zeros() must really write zeros.
  { prism::Tensor t = prism::full({64, 64}, 7.0); }
  prism::Tensor z = prism::zeros({64, 64});
  for (int64_t i = 0; i < z.numel(); ++i) CHECK(z.data<float>()[i] == 0.0f);
  const ha::Stats s = ha::stats();
  if (s.enabled) CHECK(s.hits >= 1);
}

TEST_CASE(
    "host allocator: live + cached bytes never exceed the peak of live bytes (or the floor)") {
  ha::empty_cache();
  if (!ha::stats().enabled) return;  // sanitizer builds and PRISM_HOST_CACHE=0 never cache
  // Sizes above the 256 MiB floor, never touched (no page is made resident).
  const size_t big = size_t{200} << 20, other = size_t{150} << 20;
  const ha::Stats start = ha::stats();
  void* a = ha::allocate(big);
  void* b = ha::allocate(big);
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  CHECK(reinterpret_cast<uintptr_t>(a) % 64 == 0);
  const ha::Stats both = ha::stats();
  CHECK(both.live_bytes == start.live_bytes + 2 * static_cast<int64_t>(ha::size_class(big)));
  CHECK(both.peak_live_bytes >= both.live_bytes);
  ha::release(a, big);
  ha::release(b, big);
  const ha::Stats freed = ha::stats();
  CHECK(freed.cached_bytes == 2 * static_cast<int64_t>(ha::size_class(big)));
  CHECK(freed.live_bytes == start.live_bytes);
  // Another size misses; holding it beside both cached buffers would pass the peak, so one of
  // them goes back to the C library first.
  void* c = ha::allocate(other);
  const ha::Stats after = ha::stats();
  CHECK(after.misses == freed.misses + 1);
  CHECK(after.live_bytes + after.cached_bytes <= after.bound_bytes);
  CHECK(after.cached_bytes == static_cast<int64_t>(ha::size_class(big)));
  // A request of the cached size is still a hit.
  void* d = ha::allocate(big);
  CHECK(ha::stats().hits == after.hits + 1);
  ha::release(c, other);
  ha::release(d, big);
  ha::empty_cache();
  CHECK(ha::stats().cached_bytes == 0);
}

TEST_CASE("host allocator: a request the C library refuses leaves no live bytes and no peak") {
  // The sanitizers' allocators stop the program on a request past their maximum instead of
  // returning null (ASan builds do not cache at all; ThreadSanitizer's caches but would abort).
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  return;
#endif
  if (!ha::stats().enabled) return;
  const ha::Stats before = ha::stats();
  void* p = ha::allocate(size_t{1} << 50);  // 1 PiB: refused
  CHECK(p == nullptr);
  const ha::Stats after = ha::stats();
  CHECK(after.live_bytes == before.live_bytes);
  CHECK(after.peak_live_bytes == before.peak_live_bytes);
}
