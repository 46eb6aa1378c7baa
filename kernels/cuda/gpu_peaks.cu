// The GPU's roofline for `prism machine`: float32 GEMM rate (cuBLAS, the best GEMM on the
// device, in true float32) and device-memory bandwidth (a STREAM-style triad).
//
// Why these two. Every GPU kernel in the lab is compared with one of them: a matmul against
// cuBLAS's rate, an elementwise or softmax kernel against the triad's bandwidth. Datasheet peaks
// are higher (boost clocks, FP32 FMA on every lane every cycle); what a real kernel can reach on
// this device is the honest denominator.
//
// Timing: CUDA events around each repetition on prism's stream, after one warm-up call (cuBLAS
// picks its algorithm and the clocks ramp up on the first). The best repetition is the peak,
// as for the CPU figures (interference only slows a run down); the median is reported beside it.
#include <algorithm>
#include <vector>

#include "kernels/cuda/backend.h"
#include "kernels/cuda/cublas_gemm.h"
#include "kernels/cuda/cuda_common.h"

namespace prism::kernels::gpu::backend {

namespace {

using cuda::stream;

// a[i] = b[i] + s c[i]: two reads and one write per element (12 bytes in float32).
__global__ void triad_kernel(float* __restrict__ a, const float* __restrict__ b,
                             const float* __restrict__ c, float s, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    a[i] = b[i] + s * c[i];
  }
}

__global__ void fill_kernel(float* __restrict__ p, float v, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    p[i] = v;
  }
}

// A CUDA event destroyed with its scope (also when a timed body throws).
struct Event {
  cudaEvent_t e = nullptr;
  Event() { PRISM_CUDA_CHECK(cudaEventCreate(&e)); }
  ~Event() { (void)cudaEventDestroy(e); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
};

// Times `body` once per repetition with events; returns milliseconds per repetition.
template <class F>
std::vector<float> time_reps(int reps, F&& body) {
  Event start_event, stop_event;
  cudaEvent_t start = start_event.e, stop = stop_event.e;
  body();  // warm-up
  std::vector<float> ms;
  for (int r = 0; r < reps; ++r) {
    PRISM_CUDA_CHECK(cudaEventRecord(start, stream()));
    body();
    PRISM_CUDA_CHECK(cudaEventRecord(stop, stream()));
    PRISM_CUDA_CHECK(cudaEventSynchronize(stop));
    float t = 0;
    PRISM_CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  return ms;
}

// Best and median rate for `work` units per repetition.
void rates(const std::vector<float>& ms, double work, double* best, double* median) {
  std::vector<float> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  *best = work / (static_cast<double>(sorted.front()) * 1e-3);
  *median = work / (static_cast<double>(sorted[sorted.size() / 2]) * 1e-3);
}

}  // namespace

GpuPeaks measure_peaks(int reps) {
  require("measure_peaks");
  GpuPeaks p;
  p.reps = std::max(reps, 1);

  // SGEMM: 8192^3 is ~1.1 TFLOP, tens of milliseconds on a current GPU: long enough that the
  // events' half-microsecond resolution does not matter, large enough to reach peak tiles.
  const int64_t n = 8192;
  p.gemm_n = n;
  {
    const auto bytes = static_cast<size_t>(n * n) * sizeof(float);
    cuda::DeviceBuffer a(bytes), b(bytes), c(bytes);
    const unsigned grid = cuda::grid_for(n * n);
    fill_kernel<<<grid, cuda::kBlock, 0, stream()>>>(a.as<float>(), 0.5f, n * n);
    PRISM_CUDA_CHECK_LAUNCH("fill_kernel");
    fill_kernel<<<grid, cuda::kBlock, 0, stream()>>>(b.as<float>(), 0.25f, n * n);
    PRISM_CUDA_CHECK_LAUNCH("fill_kernel");
    const auto ms = time_reps(p.reps, [&] {
      cuda::gemm<float>(1, n, n, n, 1.f, {a.as<float>(), n, 1, 0}, {b.as<float>(), n, 1, 0}, 0.f,
                        c.as<float>(), n, 0);
    });
    rates(ms, 2.0 * static_cast<double>(n) * n * n / 1e9, &p.gemm_gflops, &p.gemm_gflops_median);
  }

  // Triad over three 256 MiB arrays: far beyond any GPU's L2 (50 MB on an H100).
  const int64_t elems = int64_t{64} << 20;
  p.triad_bytes = elems * static_cast<int64_t>(sizeof(float));
  {
    const auto bytes = static_cast<size_t>(p.triad_bytes);
    cuda::DeviceBuffer a(bytes), b(bytes), c(bytes);
    const unsigned grid = cuda::grid_for(elems);
    fill_kernel<<<grid, cuda::kBlock, 0, stream()>>>(b.as<float>(), 1.f, elems);
    PRISM_CUDA_CHECK_LAUNCH("fill_kernel");
    fill_kernel<<<grid, cuda::kBlock, 0, stream()>>>(c.as<float>(), 2.f, elems);
    PRISM_CUDA_CHECK_LAUNCH("fill_kernel");
    const auto ms = time_reps(p.reps, [&] {
      triad_kernel<<<grid, cuda::kBlock, 0, stream()>>>(a.as<float>(), b.as<float>(), c.as<float>(),
                                                        3.f, elems);
      PRISM_CUDA_CHECK_LAUNCH("triad_kernel");
    });
    rates(ms, 12.0 * static_cast<double>(elems) / 1e9, &p.triad_gbps, &p.triad_gbps_median);
  }
  synchronize();
  empty_cache();  // the 1.5 GB of operands would otherwise stay reserved in the cache
  return p;
}

}  // namespace prism::kernels::gpu::backend
