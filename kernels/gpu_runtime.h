// The GPU runtime as the rest of prism sees it: plain C++, no CUDA headers.
//
// Everything above kernels/ (tensors, the profiler hooks, the CLI) talks to the GPU only through
// these functions, so the same code builds with and without the CUDA toolkit. They are
// implemented by a small loader in libprism_kernels (kernels/gpu_loader.cpp): in a CUDA build it
// opens the CUDA backend, libprism_cuda.so (kernels/cuda/), the first time one of them needs the
// GPU, registers the CUDA kernels and forwards every call to it; without CUDA, `available()` is
// false and the rest throw an Error that says why. A program that never asks for a GPU never
// maps the backend, cudart or cuBLAS (kernels/gpu_backend.h says why that matters).
//
// Nothing here runs during static initialisation: the backend is loaded and the CUDA context
// created on the first call that needs them, so a program that never asks for a GPU never
// touches one. Calls that only tidy up (release, synchronize, the timer's end and read, NVTX
// ranges) never load the backend: before it is loaded there is nothing of its to tidy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace prism::kernels::gpu {

// True when this build has the CUDA backend (libprism_cuda.so was built with it). Loads nothing.
bool built();

// True when a CUDA device can be used (built, the backend loaded, a driver, at least one
// device). The first call loads the backend and initialises CUDA; later calls return the cached
// answer.
bool available();

// Why available() is false, in words (e.g. "no CUDA-capable device is detected", or why the
// backend library could not be loaded); "" if it is true.
std::string unavailable_reason();

// ---- the backend library -----------------------------------------------------------------------
// Where it is looked for: $PRISM_CUDA_BACKEND (a path to the file; only there when set), else
// beside libprism_kernels.so, else beside the executable. Every failure (missing file, dlopen's
// error, a missing entry symbol, a library built from other sources) becomes
// unavailable_reason(), never a crash.

// Loads the backend and registers its kernels (with the kernel choices made so far applied to
// them), once; true if it is loaded. Touches no GPU: `prism ops` uses it to list the CUDA
// variants on a machine without one. available() and every call that needs a device load it.
bool load_backend();
// True once load_backend() has succeeded; loads nothing.
bool backend_loaded();
// The file the backend was loaded from, "" if it is not loaded.
std::string backend_path();

// Throws an Error "<what>: CUDA is not available: <reason>" unless available().
void require(const char* what);

struct DeviceInfo {
  std::string name;       // "NVIDIA H100 80GB HBM3"
  int compute_major = 0;  // compute capability, e.g. 9.0
  int compute_minor = 0;
  int sm_count = 0;         // streaming multiprocessors
  int64_t total_bytes = 0;  // device memory
  double sm_clock_ghz = 0;  // peak SM clock
  int64_t l2_bytes = 0;
  int driver_version = 0;  // e.g. 13000 for 13.0
  int runtime_version = 0;
};
DeviceInfo device_info();  // requires available()

// ---- memory: a caching allocator in front of cudaMalloc ---------------------------------------
// Device buffers are kept by size class after they are freed and handed out again, because
// cudaMalloc and cudaFree synchronise the device and cost tens of microseconds each. The
// profiler's memory tracker counts what tensors ask for (tensor/storage.cpp), not the cache.

// A device buffer of at least `nbytes` (> 0) bytes, 256-byte aligned. Throws an Error naming
// the size, the bytes in use and the bytes cached when the device is out of memory (after
// giving the cache back and trying once more).
void* allocate(size_t nbytes);
// Returns a buffer from allocate(); `nbytes` must be the size asked for. Work queued on prism's
// stream that still uses the buffer is safe: the next user of a recycled buffer runs on the
// same stream, after it.
void release(void* p, size_t nbytes);
// Hands every cached, unused buffer back to the driver.
void empty_cache();

struct CacheStats {
  int64_t reserved_bytes = 0;  // held from the driver: in use + cached
  int64_t cached_bytes = 0;    // free, waiting for reuse
  int64_t driver_allocs = 0;   // cudaMalloc calls since start
  int64_t cache_hits = 0;      // allocations served from the cache
};
CacheStats cache_stats();

// ---- managed (unified) memory: one pointer valid on the host and on the device ----------------
// For tools that fill buffers on the host and hand the same pointers to CUDA kernels (the kernel
// lab, kernels/opinfo/case_memory.h). Not cached and not seen by the memory tracker: tensors use
// allocate() above. Pages migrate on first touch; prefetch_to_device moves them ahead of time.

// `nbytes` (> 0) of managed memory, 256-byte aligned (cudaMallocManaged); throws an Error naming
// the size when CUDA is absent or the allocation fails. 0 bytes gives nullptr.
void* allocate_managed(size_t nbytes);
// Frees a buffer from allocate_managed (cudaFree, which waits for the device); nullptr is a
// no-op. Never throws (it runs in destructors); an error is dropped.
void release_managed(void* p, size_t nbytes);
// Queues a migration of a managed range to the device on prism's stream (cudaMemPrefetchAsync).
// A hint: a no-op where the device cannot prefetch (no concurrent managed access).
void prefetch_to_device(const void* p, size_t nbytes);

// ---- copies and synchronisation (all on prism's stream) ---------------------------------------
void copy_to_device(void* dst, const void* src, size_t nbytes);  // host -> device
void copy_to_host(void* dst, const void* src, size_t nbytes);    // device -> host; waits
void copy_on_device(void* dst, const void* src, size_t nbytes);  // device -> device
void memset_zero(void* dst, size_t nbytes);
// Waits for all work queued on prism's stream; throws an Error for an earlier kernel's fault.
void synchronize();

// ---- timing: CUDA events, read after the fact --------------------------------------------------
// An op on the GPU returns as soon as its kernel is queued, so the host clock measures the
// launch, not the work. The profiler brackets each GPU op with two events on prism's stream and
// reads them only when the session stops: one wait at the end, none per op.

// Starts a timing session: forgets earlier slots. Makes no GPU call; the session's first
// timer_begin records the reference event that its GPU times are measured from.
void timer_reset();
// Records a start event and returns its slot: a handle that grows within a session (the
// session's first GPU op has the smallest) and never names a slot of another session.
int32_t timer_begin();
// Records the end event of a slot. Never throws (it runs in destructors).
void timer_end(int32_t slot);
// The slot's start (ns after the reference event) and duration (ns). The first call waits for
// the device; false if the slot is unknown or its events failed.
bool timer_read(int32_t slot, int64_t* start_ns, int64_t* dur_ns);

// ---- the GPU's limits (what `prism machine` prints) ---------------------------------------------
struct GpuPeaks {
  int64_t gemm_n = 0;      // cuBLAS SGEMM size timed (n x n x n, float32, no TF32)
  double gemm_gflops = 0;  // best of the repetitions
  double gemm_gflops_median = 0;
  int64_t triad_bytes = 0;  // each of the three triad arrays
  double triad_gbps = 0;    // a = b + s c over float arrays far larger than L2: 12 B/element
  double triad_gbps_median = 0;
  int reps = 0;
};
// Times cuBLAS SGEMM and a triad kernel with CUDA events, `reps` times each (after a warm-up).
GpuPeaks measure_peaks(int reps);

// ---- NVTX: op names in Nsight Systems ----------------------------------------------------------
// Push/pop a named range on this thread. Cheap no-ops unless a tool such as nsys is attached.
void range_push(const char* name);
void range_pop();

}  // namespace prism::kernels::gpu
