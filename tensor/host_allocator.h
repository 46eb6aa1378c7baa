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
// a buffer; freed buffers go back to their list.
//
// How much it keeps. Not a fixed figure: a fixed 1 GiB cost GPT-2 small's training step (B 4,
// T 64) 0.7 s of 3.2 s in page faults (its step frees 2.5 GB of buffers, many of 50-150 MB, so
// most went back to the kernel), and would be waste for a model that never holds 100 MB. The rule
// instead: the bytes held, live plus cached, never exceed 1.25 times the most the program's tensors
// ever held live at once (or PRISM_HOST_CACHE_MB, default 256, if that is larger). A training step
// asks for the same buffers every step, so the cache then serves all of them without letting the
// resident set grow much past the step's own peak (the quarter is slack for buffers cached at the
// peak that the peak does not use: host_allocator.cpp); when the sizes change (another batch size),
// a miss that would cross the bound first frees cached buffers of other sizes.
//
// Not transparent huge pages: madvise(MADV_HUGEPAGE) on the big buffers was tried and left the
// warm GPT-2 small step as it was (1.72-1.78 s against 1.73-1.75 s) while the cold first step
// took 5.3-5.7 s instead of 3.1-3.6 s: the kernel compacts memory to find each 2 MiB page.
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
  int64_t cached_bytes = 0;     // held in free lists now
  int64_t hits = 0;             // requests served from the cache
  int64_t misses = 0;           // cacheable requests that went to the C library
  int64_t live_bytes = 0;       // cacheable buffers handed out and not yet released (size classes)
  int64_t peak_live_bytes = 0;  // the most live_bytes has been
  int64_t bound_bytes = 0;      // live + cached stay under this: max(1.25 x peak live, the floor)
  bool enabled = false;
};
Stats stats();
// Frees every cached buffer (tests; a program about to allocate something huge).
void empty_cache();

}  // namespace prism::host_allocator
