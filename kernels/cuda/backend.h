// The CUDA backend's implementation of the gpu:: API (contract: kernels/gpu_runtime.h), inside
// libprism_cuda.so. The loader in libprism_kernels (kernels/gpu_loader.cpp) reaches these
// through the table of backend_entry.cpp; they live in their own namespace so that no function
// is defined twice in a process that has both libraries. Code inside the backend (the kernels,
// DeviceBuffer) calls these directly rather than through the loader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/gpu_runtime.h"

namespace prism::kernels::gpu::backend {

bool available();
std::string unavailable_reason();
void require(const char* what);
DeviceInfo device_info();

void* allocate(size_t nbytes);  // device_cache.cpp
void release(void* p, size_t nbytes);
void empty_cache();
CacheStats cache_stats();

void* allocate_managed(size_t nbytes);  // managed.cpp
void release_managed(void* p, size_t nbytes);
void prefetch_to_device(const void* p, size_t nbytes);

void copy_to_device(void* dst, const void* src, size_t nbytes);
void copy_to_host(void* dst, const void* src, size_t nbytes);
void copy_on_device(void* dst, const void* src, size_t nbytes);
void memset_zero(void* dst, size_t nbytes);
void synchronize();

void timer_reset();
int32_t timer_begin();
void timer_end(int32_t slot);
bool timer_read(int32_t slot, int64_t* start_ns, int64_t* dur_ns);

GpuPeaks measure_peaks(int reps);  // gpu_peaks.cu

void range_push(const char* name);
void range_pop();

}  // namespace prism::kernels::gpu::backend
