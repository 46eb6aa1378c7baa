// A training step of each model gives the same bits at 1 thread and at 2: the loss-side output
// and every parameter's gradient (kernels/cpu/parallel.h fixes each kernel's chunks by the
// shapes, never by the thread count; tests/ops/determinism_test.cpp checks op by op).
#include <doctest/doctest.h>
#include <omp.h>

#include <cstring>
#include <string>
#include <vector>

#include "nn/models/zoo.h"
#include "tensor/ops.h"
#include "tensor/random.h"

namespace prism {
namespace {

struct Step {
  Tensor out;
  std::vector<Tensor> grads;
};

// Builds the model from a fixed seed and runs forward and backward once on a batch of 4, at
// `threads` OpenMP threads.
Step step(const std::string& name, const nn::ModelOptions& o, int threads) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  manual_seed(5);
  auto model = nn::make_model(name, o);
  Dims shape = nn::default_input(name, o).shape;
  shape[0] = 4;
  Tensor x;
  if (nn::default_input(name, o).dtype == DType::i64) {
    std::vector<int64_t> ids(static_cast<size_t>(shape.numel()));
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>((i * 37 + 11) % 100);
    x = from_vector(ids, shape);
  } else {
    x = randn(shape);
  }
  Step s;
  s.out = (*model)(x);
  s.out.backward(randn(s.out.shape()));
  for (const Tensor& p : model->parameters()) s.grads.push_back(p.grad());
  omp_set_num_threads(saved);
  return s;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() &&
         std::memcmp(a.data<float>(), b.data<float>(), static_cast<size_t>(a.nbytes())) == 0;
}

TEST_CASE("threads: a training step's output and gradients are the same bits at 1 and 2 threads") {
  nn::ModelOptions small;  // models at test size: 32x32 images, a 64-token context, no dropout
  small.in_channels = 3;
  small.image_size = 32;
  small.num_classes = 10;
  nn::ModelOptions gpt;
  gpt.block_size = 64;
  gpt.dropout = 0;
  const std::vector<std::pair<std::string, nn::ModelOptions>> models{
      {"mlp", {}}, {"cnn", {}}, {"resnet18", small}, {"transformer", gpt}};
  for (const auto& [name, options] : models) {
    CAPTURE(name);
    const Step one = step(name, options, 1), two = step(name, options, 2);
    CHECK(same_bits(one.out, two.out));
    REQUIRE(one.grads.size() == two.grads.size());
    int differ = 0;
    for (size_t i = 0; i < one.grads.size(); ++i) differ += !same_bits(one.grads[i], two.grads[i]);
    CHECK(differ == 0);
  }
}

}  // namespace
}  // namespace prism
