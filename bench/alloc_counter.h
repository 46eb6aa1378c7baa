// Counts heap allocations made through the global operator new on this thread, so a benchmark
// can state how many allocations one op call makes. Replaces operator new / delete for the whole
// program it is linked into (one thread-local increment per allocation). Tensor data buffers come
// from aligned_alloc (tensor/storage.cpp) and are not counted here.
#pragma once

#include <cstdint>

namespace prism::bench {

int64_t heap_allocs_on_this_thread();

}  // namespace prism::bench
