// The GPU runtime of a build without the CUDA toolkit: nothing is available, and every call
// that needs a device says so (kernels/gpu_runtime.h has the real contract).
#include <string>

#include "kernels/gpu_runtime.h"
#include "kernels/types.h"

namespace prism::kernels::gpu {

namespace {
constexpr const char* kWhy =
    "prism was built without CUDA (no CUDA compiler was found when it was configured, or "
    "PRISM_CUDA was OFF)";

[[noreturn]] void fail(const char* what) {
  throw Error(std::string(what) + ": CUDA is not available: " + kWhy);
}
}  // namespace

bool built() {
  return false;
}
bool available() {
  return false;
}
std::string unavailable_reason() {
  return kWhy;
}
void require(const char* what) {
  fail(what);
}
DeviceInfo device_info() {
  fail("device_info");
}

void* allocate(size_t) {
  fail("allocate");
}
void release(void*, size_t) {}
void empty_cache() {}
CacheStats cache_stats() {
  return {};
}

void* allocate_managed(size_t) {
  fail("allocate_managed");
}
void release_managed(void*, size_t) {}
void prefetch_to_device(const void*, size_t) {
  fail("prefetch_to_device");
}

void copy_to_device(void*, const void*, size_t) {
  fail("copy_to_device");
}
void copy_to_host(void*, const void*, size_t) {
  fail("copy_to_host");
}
void copy_on_device(void*, const void*, size_t) {
  fail("copy_on_device");
}
void memset_zero(void*, size_t) {
  fail("memset_zero");
}
void synchronize() {}

void timer_reset() {}
int32_t timer_begin() {
  return -1;
}
void timer_end(int32_t) {}
bool timer_read(int32_t, int64_t*, int64_t*) {
  return false;
}

GpuPeaks measure_peaks(int) {
  fail("measure_peaks");
}

void range_push(const char*) {}
void range_pop() {}

}  // namespace prism::kernels::gpu
