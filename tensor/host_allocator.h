// Where CPU tensor buffers come from: a caching allocator in front of aligned_alloc.
//
// Why. A training step allocates the same buffer sizes in the same order every step
// (activations, gradients, im2col scratch). Handing each freed buffer back to the C library
// and asking again next step costs more than the call: glibc returns big blocks to the kernel
// (munmap, or trimming the heap top), and the next allocation touches fresh pages, one page
// fault per 4 KiB. We measured a LeNet step spending a fifth of its time in relu, relu's
// gradient and max-pool on 3 MB buffers at 5-17 GB/s, mostly in page faults. Keeping freed
// buffers by size class and reusing them removes the faults; PyTorch's CUDA caching allocator
// does the same for GPU memory for the same reason.
//
// How. Requests of at least kMinCachedBytes are rounded up to a size class (eight classes per
// power of two, so at most 12.5% is wasted) and served from that class's free list when it has
// a buffer; freed buffers go back to their list while the cache holds less than its limit
// (PRISM_HOST_CACHE_MB, default 1024), else back to the C library. Smaller requests go straight
// to aligned_alloc: glibc's own bins serve them well.
//
// The profiler's memory tracker counts what tensors ask for (tensor/storage.cpp), not what
// this cache holds, so a profile's "allocs" are the same with the cache on or off.
//
// Off when PRISM_HOST_CACHE=0, and always off under AddressSanitizer, which can only catch a
// use-after-free if freed memory really is freed.
#pragma once

#include <cstddef>
#include <cstdint>

namespace prism::host_allocator {

inline constexpr size_t kAlignment = 64;  // a cache line, and one AVX-512 register
inline constexpr size_t kMinCachedBytes = 16 * 1024;

// A 64-byte aligned buffer of at least `nbytes` (> 0) bytes; nullptr when out of memory.
void* allocate(size_t nbytes);
// Returns a buffer from allocate(); `nbytes` must be the size it was asked for.
void release(void* p, size_t nbytes);

// The size class a request of `nbytes` is served from (nbytes itself below kMinCachedBytes,
// rounded to kAlignment).
size_t size_class(size_t nbytes);

struct Stats {
  int64_t cached_bytes = 0;  // held in free lists now
  int64_t hits = 0;          // requests served from the cache
  int64_t misses = 0;        // cacheable requests that went to the C library
  bool enabled = false;
};
Stats stats();
// Frees every cached buffer (tests; a program about to allocate something huge).
void empty_cache();

}  // namespace prism::host_allocator
