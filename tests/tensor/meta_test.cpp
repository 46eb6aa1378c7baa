// The meta device: shapes, costs and memory of a computation without its data.
#include <doctest/doctest.h>

#include "profiler/aggregate.h"
#include "profiler/memory.h"
#include "profiler/session.h"
#include "tensor/ops.h"

using namespace prism;

TEST_CASE("meta: factories make tensors with a shape and no data") {
  DefaultDevice meta(Device::meta);
  Tensor x = randn({3, 4});
  CHECK(x.device() == Device::meta);
  CHECK(x.shape() == Dims{3, 4});
  CHECK(x.data<float>() == nullptr);
  CHECK_THROWS_AS(x.item<double>(), Error);
  CHECK_THROWS_AS(x.to_vector<float>(), Error);
  CHECK(x.str().find("meta") != std::string::npos);
}

TEST_CASE("meta: ops check shapes and give output shapes, forward and backward") {
  DefaultDevice meta(Device::meta);
  Tensor w = randn({784, 256}).set_requires_grad();
  Tensor b = zeros({256}).set_requires_grad();
  Tensor x = randn({128, 784});
  Tensor h = relu(add(matmul(x, w), b));
  CHECK(h.shape() == Dims{128, 256});
  Tensor loss = mean(log_softmax(h, 1));
  CHECK(loss.dim() == 0);
  loss.backward();
  REQUIRE(w.grad().defined());
  CHECK(w.grad().shape() == Dims{784, 256});
  CHECK(w.grad().device() == Device::meta);
  CHECK(b.grad().shape() == Dims{256});
  CHECK_THROWS_AS(matmul(x, randn({783, 10})), Error);  // shapes are still checked
}

TEST_CASE("meta: the profile counts FLOPs and memory, the variant says meta") {
  DefaultDevice meta(Device::meta);
  Tensor a = randn({64, 32});
  Tensor b = randn({32, 16});
  const auto before = profiler::memory_stats(static_cast<int>(Device::meta));
  profiler::Session session;
  Tensor c = matmul(a, b);
  const profiler::Profile& p = session.stop();
  bool found = false;
  for (const auto& r : p.recording.records) {
    if (std::string(r.op) != "matmul") continue;
    found = true;
    CHECK(std::string(r.variant) == "meta");
    CHECK(std::string(r.device) == "meta");
    CHECK(r.cost.flops == 2 * 64 * 32 * 16);
    CHECK(r.allocs == 1);
    CHECK(r.alloc_bytes == 64 * 16 * 4);
  }
  CHECK(found);
  const auto after = profiler::memory_stats(static_cast<int>(Device::meta));
  CHECK(after.live_bytes - before.live_bytes == 64 * 16 * 4);
  // No cpu memory was touched by the meta computation.
  CHECK(c.data<float>() == nullptr);
}

TEST_CASE("meta: a cpu tensor and a meta tensor do not mix") {
  Tensor cpu = ones({2, 2});
  Tensor m;
  {
    DefaultDevice meta(Device::meta);
    m = ones({2, 2});
  }
  CHECK_THROWS_AS(add(cpu, m), Error);
}
