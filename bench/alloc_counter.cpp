// The operator new replacement behind alloc_counter.h. It lives in its own file so the compiler
// never inlines it into a caller (GCC then misreads new + free as a mismatched pair).
#include "bench/alloc_counter.h"

#include <cstdlib>
#include <new>

namespace {
thread_local int64_t t_heap_allocs = 0;
}  // namespace

namespace prism::bench {
int64_t heap_allocs_on_this_thread() {
  return t_heap_allocs;
}
}  // namespace prism::bench

void* operator new(std::size_t n) {
  ++t_heap_allocs;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  return ::operator new(n);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
