// The GPU runtime of the CUDA backend (contract: kernels/gpu_runtime.h; reached through the
// loader, kernels/gpu_loader.cpp): device discovery, prism's stream, copies, event timing and NVTX
// ranges. The caching allocator is in device_cache.cpp.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <mutex>
#include <string>
#include <vector>

#include "kernels/cuda/backend.h"
#include "kernels/cuda/cuda_common.h"
#include "kernels/types.h"

namespace prism::kernels {

namespace cuda {

void check(cudaError_t err, const char* what, const char* file, int line) {
  if (err == cudaSuccess) return;
  // Clear the sticky "last error" of a launch failure so the next check starts clean (a fault
  // inside a kernel is sticky for the context and cannot be cleared; it reports again).
  (void)cudaGetLastError();
  throw Error(std::string("CUDA error in ") + what + " (" + file + ":" + std::to_string(line) +
              "): " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}

cudaStream_t stream() {
  static cudaStream_t s = [] {
    gpu::backend::require("cuda stream");
    cudaStream_t created = nullptr;
    PRISM_CUDA_CHECK(cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking));
    return created;
  }();
  return s;
}

}  // namespace cuda

namespace gpu::backend {

namespace {

struct Availability {
  bool ok = false;
  std::string why;
};

// Asked once, on first use: never during static initialisation.
const Availability& availability() {
  static const Availability a = [] {
    Availability r;
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      r.why = std::string(cudaGetErrorString(err)) + " (" + cudaGetErrorName(err) + ")";
    } else if (count == 0) {
      r.why = "no CUDA device is visible";
    } else {
      err = cudaSetDevice(0);
      if (err != cudaSuccess) {
        (void)cudaGetLastError();
        r.why = std::string("cannot use device 0: ") + cudaGetErrorString(err);
      } else {
        r.ok = true;
      }
    }
    return r;
  }();
  return a;
}

}  // namespace

bool available() {
  return availability().ok;
}
std::string unavailable_reason() {
  return availability().ok ? "" : availability().why;
}

void require(const char* what) {
  if (!available()) {
    throw Error(std::string(what) + ": CUDA is not available: " + availability().why);
  }
}

DeviceInfo device_info() {
  require("device_info");
  cudaDeviceProp p{};
  PRISM_CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
  DeviceInfo d;
  d.name = p.name;
  d.compute_major = p.major;
  d.compute_minor = p.minor;
  d.sm_count = p.multiProcessorCount;
  d.total_bytes = static_cast<int64_t>(p.totalGlobalMem);
  d.l2_bytes = p.l2CacheSize;
  int khz = 0;
  PRISM_CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  d.sm_clock_ghz = khz / 1e6;
  PRISM_CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
  PRISM_CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
  return d;
}

// ---- copies ------------------------------------------------------------------------------------
// From pageable host memory cudaMemcpyAsync stages the bytes before it returns, so the caller may
// free its buffer at once; to the host it must wait, since the caller reads the bytes next.

void copy_to_device(void* dst, const void* src, size_t nbytes) {
  if (nbytes == 0) return;
  PRISM_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyHostToDevice, cuda::stream()));
}

void copy_to_host(void* dst, const void* src, size_t nbytes) {
  if (nbytes == 0) return;
  PRISM_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToHost, cuda::stream()));
  PRISM_CUDA_CHECK(cudaStreamSynchronize(cuda::stream()));
}

void copy_on_device(void* dst, const void* src, size_t nbytes) {
  if (nbytes == 0) return;
  PRISM_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToDevice, cuda::stream()));
}

void memset_zero(void* dst, size_t nbytes) {
  if (nbytes == 0) return;
  PRISM_CUDA_CHECK(cudaMemsetAsync(dst, 0, nbytes, cuda::stream()));
}

void synchronize() {
  if (!available()) return;
  PRISM_CUDA_CHECK(cudaStreamSynchronize(cuda::stream()));
}

// ---- timing
// -------------------------------------------------------------------------------------- Events are
// created once and reused across sessions (creating one costs a few microseconds). Slots are handed
// out in order; a session's reads happen after its last op, so one wait on the newest end event
// covers them all.

namespace {

// Handles are `base + slot`: base grows by the slots a session used when the next one starts,
// so a handle from an earlier session (an op still open when the session restarted) never
// names a slot of the new one.
struct Timer {
  std::mutex mu;
  cudaEvent_t reference = nullptr;
  std::vector<cudaEvent_t> starts, ends;
  std::vector<bool> ended;  // the slot's end event was recorded in this session
  int32_t base = 0;
  int32_t used = 0;
  bool waited = false;
  bool reference_pending = true;

  // The slot of a handle from this session, or -1.
  int32_t slot_of(int32_t handle) const {
    const int32_t s = handle - base;
    return handle >= base && s < used ? s : -1;
  }
};

Timer& timer() {
  static Timer t;
  return t;
}

cudaEvent_t new_event() {
  cudaEvent_t e = nullptr;
  PRISM_CUDA_CHECK(cudaEventCreate(&e));  // with timing (the default flags)
  return e;
}

}  // namespace

void timer_reset() {
  Timer& t = timer();
  std::lock_guard lock(t.mu);
  // Handles stay unique across sessions; start again from 0 long before int32 runs out.
  t.base = t.base + t.used > (1 << 30) ? 0 : t.base + t.used;
  t.used = 0;
  t.waited = false;
  t.reference_pending = true;  // recorded by the session's first GPU op: no GPU call here
}

int32_t timer_begin() {
  Timer& t = timer();
  std::lock_guard lock(t.mu);
  if (t.reference_pending) {
    // GPU times are measured from just before the session's first GPU op.
    if (!t.reference) t.reference = new_event();
    PRISM_CUDA_CHECK(cudaEventRecord(t.reference, cuda::stream()));
    t.reference_pending = false;
  }
  auto slot = static_cast<size_t>(t.used);
  if (slot == t.starts.size()) {
    t.starts.push_back(new_event());
    t.ends.push_back(new_event());
    t.ended.push_back(false);
  }
  PRISM_CUDA_CHECK(cudaEventRecord(t.starts[slot], cuda::stream()));
  t.ended[slot] = false;
  t.waited = false;
  return t.base + t.used++;
}

void timer_end(int32_t slot) {
  // Called from a destructor: an error is not thrown but left for timer_read, which then finds
  // the slot's events unusable and reports no GPU time for it.
  Timer& t = timer();
  std::lock_guard lock(t.mu);
  const int32_t s = t.slot_of(slot);
  if (s < 0) return;
  if (cudaEventRecord(t.ends[static_cast<size_t>(s)], cuda::stream()) == cudaSuccess) {
    t.ended[static_cast<size_t>(s)] = true;
  } else {
    (void)cudaGetLastError();
  }
}

bool timer_read(int32_t slot, int64_t* start_ns, int64_t* dur_ns) {
  Timer& t = timer();
  std::lock_guard lock(t.mu);
  const int32_t slot_index = t.slot_of(slot);
  if (slot_index < 0 || !t.ended[static_cast<size_t>(slot_index)]) return false;
  if (!t.waited) {
    // Everything was queued on one stream, so once it drains every event has completed.
    if (cudaStreamSynchronize(cuda::stream()) != cudaSuccess) return false;
    t.waited = true;
  }
  float to_start = 0, dur = 0;  // milliseconds, about half a microsecond resolution
  const auto s = static_cast<size_t>(slot_index);
  if (cudaEventElapsedTime(&to_start, t.reference, t.starts[s]) != cudaSuccess ||
      cudaEventElapsedTime(&dur, t.starts[s], t.ends[s]) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  *start_ns = static_cast<int64_t>(static_cast<double>(to_start) * 1e6);
  *dur_ns = static_cast<int64_t>(static_cast<double>(dur) * 1e6);
  return true;
}

// ---- NVTX
// ------------------------------------------------------------------------------------------ NVTX
// v3 is header-only: with no tool attached each call is a check of a function pointer.

void range_push(const char* name) {
  nvtxRangePushA(name);
}
void range_pop() {
  nvtxRangePop();
}

}  // namespace gpu::backend
}  // namespace prism::kernels
