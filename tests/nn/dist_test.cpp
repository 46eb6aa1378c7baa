// The pieces of data parallelism that need no second process: the bucket plan, the loader's
// shards, the autograd engine's gradient-ready hook, and the communicator's refusal without a
// launcher. The runs under mpirun are tests/cli/ddp_test.cpp.
#include <doctest/doctest.h>

#include <cstdlib>
#include <map>
#include <vector>

#include "nn/data/loader.h"
#include "nn/data/synthetic.h"
#include "nn/dist/buckets.h"
#include "nn/dist/comm.h"
#include "tensor/autograd/grad_ready.h"
#include "tensor/ops.h"
#include "tensor/random.h"

namespace prism {
namespace {

std::vector<int> params_of(const dist::Bucket& b) {
  return b.params;
}

TEST_CASE("plan_buckets: reverse registration order, cut before a bucket would pass its size") {
  // Sizes of an MLP 784-256-256-10: W1, b1, W2, b2, W3, b3.
  const std::vector<int64_t> n{200704, 256, 65536, 256, 2560, 10};
  SUBCASE("1 MiB buckets: the last layers together, W1 alone") {
    const auto b = dist::plan_buckets(n, int64_t{1} << 20);
    REQUIRE(b.size() == 2);
    CHECK(params_of(b[0]) == std::vector<int>{5, 4, 3, 2, 1});
    CHECK(b[0].offset == 0);
    CHECK(b[0].numel == 10 + 2560 + 256 + 65536 + 256);
    CHECK(params_of(b[1]) == std::vector<int>{0});
    CHECK(b[1].offset == b[0].numel);
    CHECK(b[1].numel == 200704);
  }
  SUBCASE("0: one bucket for everything") {
    const auto b = dist::plan_buckets(n, 0);
    REQUIRE(b.size() == 1);
    CHECK(b[0].numel == 269322);
    CHECK(params_of(b[0]) == std::vector<int>{5, 4, 3, 2, 1, 0});
  }
  SUBCASE("a bucket smaller than every parameter: one each") {
    const auto b = dist::plan_buckets(n, 4);
    REQUIRE(b.size() == 6);
    int64_t offset = 0;
    for (size_t i = 0; i < b.size(); ++i) {
      CHECK(b[i].params.size() == 1);
      CHECK(b[i].offset == offset);
      offset += b[i].numel;
    }
    CHECK(offset == 269322);
  }
  SUBCASE("exactly full: the next parameter starts a new bucket") {
    const auto b = dist::plan_buckets({3, 2, 2}, 16);  // 4 elements of 4 bytes fill a bucket
    REQUIRE(b.size() == 2);
    CHECK(params_of(b[0]) == std::vector<int>{2, 1});
    CHECK(params_of(b[1]) == std::vector<int>{0});
  }
  CHECK(dist::plan_buckets({}, 1024).empty());
  CHECK_THROWS_WITH_AS(dist::plan_buckets({4, -1}, 16), doctest::Contains("negative size"), Error);
}

TEST_CASE("DataLoader shards: the N ranks' batch k together are the one process's batch k") {
  const nn::data::TensorDataset spirals = nn::data::spirals(/*n_per_class=*/100, 3, 0.2, 7);
  const nn::data::Dataset* data = &spirals;
  nn::data::LoaderOptions one{/*batch_size=*/12, /*shuffle=*/true, /*seed=*/5, /*drop_last=*/true};
  nn::data::DataLoader whole(*data, one);
  std::vector<std::unique_ptr<nn::data::DataLoader>> shards;
  for (int r = 0; r < 3; ++r) {
    nn::data::LoaderOptions o = one;
    o.shard_rank = r;
    o.shard_count = 3;
    shards.push_back(std::make_unique<nn::data::DataLoader>(*data, o));
    CHECK(shards.back()->num_batches() == whole.num_batches());
  }
  for (int k = 0; k < 2 * whole.num_batches() + 1; ++k) {  // across an epoch's end
    auto b = whole.next();
    if (!b) b = whole.next();
    std::vector<float> parts;
    std::vector<int64_t> labels;
    for (auto& s : shards) {
      auto p = s->next();
      if (!p) p = s->next();
      REQUIRE(p->size() == 4);
      for (float v : p->input.to_vector<float>()) parts.push_back(v);
      for (int64_t v : p->target.to_vector<int64_t>()) labels.push_back(v);
    }
    CHECK(parts == b->input.to_vector<float>());
    CHECK(labels == b->target.to_vector<int64_t>());
  }
  nn::data::LoaderOptions bad = one;
  bad.shard_count = 5;  // 12 does not split into 5
  CHECK_THROWS_WITH_AS(nn::data::DataLoader(*data, bad), doctest::Contains("equal shards"), Error);
  bad.shard_count = 3;
  bad.shard_rank = 3;
  CHECK_THROWS_WITH_AS(nn::data::DataLoader(*data, bad), doctest::Contains("does not exist"),
                       Error);
  bad.shard_rank = 0;
  bad.drop_last = false;
  CHECK_THROWS_WITH_AS(nn::data::DataLoader(*data, bad), doctest::Contains("drop_last"), Error);
}

TEST_CASE("GradReadyHook: each leaf once, after its last contribution, with its final gradient") {
  manual_seed(3);
  Tensor w = randn({4, 4}), b = randn({4}), unused = randn({2});
  for (Tensor* t : {&w, &b, &unused}) t->set_requires_grad();
  Tensor x = randn({3, 4});
  // w is used twice (two contributions), b once; `unused` takes part in nothing backward reaches.
  Tensor loss = sum(matmul(relu(add(matmul(x, w), b)), w));
  std::map<const TensorImpl*, int> calls;
  std::map<const TensorImpl*, std::vector<float>> seen;
  {
    autograd::GradReadyHook hook([&](const TensorImpl& leaf) {
      ++calls[&leaf];
      seen[&leaf] = Tensor(leaf.grad).to_vector<float>();
    });
    loss.backward();
  }
  CHECK(calls.size() == 2);
  CHECK(calls[&w.impl()] == 1);
  CHECK(calls[&b.impl()] == 1);
  CHECK(calls.count(&unused.impl()) == 0);
  // What the hook saw is the gradient backward left: nothing was added after it.
  CHECK(seen[&w.impl()] == w.grad().to_vector<float>());
  CHECK(seen[&b.impl()] == b.grad().to_vector<float>());
  // Without a hook nothing is counted, and a hook is gone with its scope.
  CHECK(autograd::GradReadyHook::current() == nullptr);
}

TEST_CASE("Comm::world refuses to start without an MPI launcher, naming the fix") {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"}) {
    REQUIRE_MESSAGE(std::getenv(v) == nullptr, v, " is set: this test runs outside mpirun");
  }
  CHECK_FALSE(dist::launched_by_mpi());
  CHECK_THROWS_WITH_AS(dist::Comm::world(), doctest::Contains("mpirun -np 2"), Error);
  CHECK_FALSE(dist::Comm::initialised());
}

}  // namespace
}  // namespace prism
