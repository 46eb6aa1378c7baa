// Devices from the cpu side: moving tensors, and the errors a machine without a usable GPU gives.
// (The GPU side, every CUDA kernel against its CPU twin, is tests/cuda/, which runs on a GPU.)
#include <doctest/doctest.h>

#include <string>

#include "kernels/gpu_runtime.h"
#include "tensor/ops.h"
#include "tensor/storage.h"
#include "tensor/tensor.h"
#include "tests/test_util.h"

using prism::Device;
using prism::Tensor;
using prism::testing::contains;
using prism::testing::error_of;
namespace gpu = prism::kernels::gpu;

TEST_CASE("device: to() the device a tensor is already on returns the same tensor") {
  Tensor x = prism::arange(6).reshape({2, 3});
  Tensor y = x.to(Device::cpu);
  CHECK(y.shares_storage_with(x));
  CHECK(y.device() == Device::cpu);
}

TEST_CASE("device: a meta tensor cannot be copied to a device with data") {
  Tensor m;
  {
    prism::DefaultDevice on(Device::meta);
    m = prism::zeros({3});
  }
  CHECK(contains(error_of([&] { (void)m.to(Device::cpu); }), "a meta tensor has no data"));
  Tensor x = prism::ones({3});
  CHECK(contains(error_of([&] { (void)x.to(Device::meta); }), "a meta tensor has no data"));
}

TEST_CASE("device: without a usable GPU every way onto it is a clear error") {
  if (gpu::available()) {
    MESSAGE("a GPU is available here; tests/cuda covers this path");
    return;
  }
  const std::string why = gpu::unavailable_reason();
  CHECK(!why.empty());
  Tensor x = prism::ones({2, 2});
  const std::string moved = error_of([&] { (void)x.to(Device::cuda); });
  CHECK(contains(moved, "to: CUDA is not available"));
  CHECK(contains(moved, why));
  // A factory on the cuda device fails the same way, from the allocator.
  prism::DefaultDevice on(Device::cuda);
  CHECK(contains(error_of([] { (void)prism::zeros({4}); }), "CUDA is not available"));
}

TEST_CASE("device: the build says whether it has the CUDA backend") {
#ifdef PRISM_HAS_CUDA
  CHECK(gpu::built());
#else
  CHECK_FALSE(gpu::built());
  CHECK_FALSE(gpu::available());
  CHECK(contains(gpu::unavailable_reason(), "built without CUDA"));
#endif
}
