// The CUDA backend's one exported symbol: the table through which libprism_kernels's loader
// (kernels/gpu_loader.cpp) registers the CUDA kernels and forwards the gpu:: API
// (kernels/gpu_backend.h says why the backend is a library of its own, opened on first use).
//
// Nothing here runs when the library is opened: the table is a constant, the kernels are
// registered when the loader asks, and CUDA itself starts at the first call that needs a device.
#include "kernels/cuda/backend.h"
#include "kernels/cuda/kernel_list.h"
#include "kernels/gpu_backend.h"

namespace prism::kernels::gpu::backend {
namespace {

BackendTable make_table() {
  BackendTable t;
  t.abi = kBackendAbi;
  t.table_size = sizeof(BackendTable);
  t.fingerprint = PRISM_GPU_BACKEND_FINGERPRINT;
  t.register_kernels = &cuda::register_cuda_kernels;
  t.available = &available;
  t.unavailable_reason = &unavailable_reason;
  t.device_info = &device_info;
  t.allocate = &allocate;
  t.release = &release;
  t.empty_cache = &empty_cache;
  t.cache_stats = &cache_stats;
  t.allocate_managed = &allocate_managed;
  t.release_managed = &release_managed;
  t.prefetch_to_device = &prefetch_to_device;
  t.copy_to_device = &copy_to_device;
  t.copy_to_host = &copy_to_host;
  t.copy_on_device = &copy_on_device;
  t.memset_zero = &memset_zero;
  t.synchronize = &synchronize;
  t.timer_reset = &timer_reset;
  t.timer_begin = &timer_begin;
  t.timer_end = &timer_end;
  t.timer_read = &timer_read;
  t.measure_peaks = &measure_peaks;
  t.range_push = &range_push;
  t.range_pop = &range_pop;
  return t;
}

}  // namespace
}  // namespace prism::kernels::gpu::backend

// The only symbol the loader looks up (gpu::kBackendEntry); C linkage so its name is plain.
extern "C" __attribute__((visibility("default"))) const prism::kernels::gpu::BackendTable*
prism_cuda_backend() {
  static const prism::kernels::gpu::BackendTable table = prism::kernels::gpu::backend::make_table();
  return &table;
}
