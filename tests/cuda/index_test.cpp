// gather / index_select and their gradients (scatter_add / index_add) on the GPU against the CPU
// kernels: along every dim, strided index tensors, int64 data, repeated indices (several sources
// adding into one destination), and the error for an index out of range.
//
// Tolerance: none. The forward ops copy values; the accumulating backward kernels add each
// destination's sources in the CPU's order (kernels/ops/index/index.cu: one thread owns each
// destination, no atomics), so every result is bit for bit the CPU's.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tensor/ops.h"
#include "tensor/random.h"
#include "tests/cuda/cuda_compare.h"
#include "tests/test_util.h"

namespace prism {
namespace {

using cuda_test::differs;
using cuda_test::gpu;
using testing::contains;
using testing::error_of;

// `count` random indices in [0, size), as an int64 tensor of `shape` (count = its numel).
Tensor random_index(const Dims& shape, int64_t size) {
  Tensor r = rand(shape, DType::f64, 0, static_cast<double>(size));
  std::vector<int64_t> v;
  for (double e : r.to_vector<double>()) v.push_back(static_cast<int64_t>(e));
  return from_vector(v, shape);
}

TEST_CASE("cuda gather and its gradient match the cpu along every dim") {
  manual_seed(51);
  const std::vector<Dims> shapes = {{1}, {13}, {7, 13}, {3, 4, 5}, {257, 3}};
  for (const std::string& variant : cuda_test::cuda_variants("gather")) {
    cuda_test::ForceVariant force("gather", variant);
    for (DType dt : {DType::f32, DType::f64, DType::i64}) {
      for (const Dims& shape : shapes) {
        for (int d = 0; d < shape.size(); ++d) {
          INFO(prism::testing::info_text("gather [", variant, "] ", dtype_name(dt), " ",
                                         shape.str(), " dim ", d));
          // The index is larger than x along d (repeats) and as large elsewhere; a transposed
          // copy of it makes it strided.
          Dims is = shape;
          is[d] = 2 * shape[d] + 1;
          Tensor index = random_index(is, shape[d]);
          Tensor x = dt == DType::i64 ? random_index(shape, 1000) : randn(shape, dt);
          CHECK(differs(gather(x, d, index), gather(gpu(x), d, gpu(index))) == "");
          if (shape.size() >= 2) {
            Tensor it = index.transpose(0, 1).contiguous().transpose(0, 1);  // strided, same values
            Tensor itg = gpu(index.transpose(0, 1).contiguous()).transpose(0, 1);
            CHECK(differs(gather(x, d, it), gather(gpu(x), d, itg)) == "");
          }
          if (dt == DType::i64) continue;
          // Gradient: scatter_add with repeated indices, in the cpu's order.
          Tensor g = randn(is, dt);
          Tensor xc = x.detach().set_requires_grad();
          sum(mul(gather(xc, d, index), g)).backward();
          Tensor xg = gpu(x).set_requires_grad();
          sum(mul(gather(xg, d, gpu(index)), gpu(g))).backward();
          CHECK(differs(xc.grad(), xg.grad()) == "");
        }
      }
    }
  }
}

TEST_CASE("cuda index_select and its gradient match the cpu, repeated rows included") {
  manual_seed(52);
  const std::vector<Dims> shapes = {{1}, {13}, {7, 13}, {3, 4, 5}, {50, 768}};
  for (const std::string& variant : cuda_test::cuda_variants("index_select")) {
    cuda_test::ForceVariant force("index_select", variant);
    for (DType dt : {DType::f32, DType::f64, DType::i64}) {
      for (const Dims& shape : shapes) {
        for (int d = 0; d < shape.size(); ++d) {
          for (int64_t count : {int64_t{1}, int64_t{7}, 3 * shape[d]}) {
            INFO(prism::testing::info_text("index_select [", variant, "] ", dtype_name(dt), " ",
                                           shape.str(), " dim ", d, " count ", count));
            Tensor index = random_index({count}, shape[d]);
            Tensor x = dt == DType::i64 ? random_index(shape, 1000) : randn(shape, dt);
            CHECK(differs(index_select(x, d, index), index_select(gpu(x), d, gpu(index))) == "");
            if (dt == DType::i64) continue;
            Dims os = shape;
            os[d] = count;
            Tensor g = randn(os, dt);
            Tensor xc = x.detach().set_requires_grad();
            sum(mul(index_select(xc, d, index), g)).backward();
            Tensor xg = gpu(x).set_requires_grad();
            sum(mul(index_select(xg, d, gpu(index)), gpu(g))).backward();
            CHECK(differs(xc.grad(), xg.grad()) == "");
          }
        }
      }
    }
  }
}

TEST_CASE("cuda gather and index_select refuse an index out of range like the cpu") {
  Tensor x = randn({4, 5}, DType::f32);
  Tensor xg = gpu(x);
  for (int64_t bad : {5, -1, 99}) {
    INFO(prism::testing::info_text("bad index ", bad));
    Tensor gi = from_vector(std::vector<int64_t>{0, 1, 2, 3, 4, 0, bad, 1}, {2, 4});
    const std::string cpu_gather = error_of([&] { gather(x.narrow(0, 0, 2), 1, gi); });
    CHECK(contains(cpu_gather, "gather: index " + std::to_string(bad) + " is out of range"));
    CHECK(error_of([&] { gather(xg.narrow(0, 0, 2), 1, gpu(gi)); }) == cpu_gather);

    Tensor si = from_vector(std::vector<int64_t>{1, bad, 2, bad}, {4});
    const std::string cpu_select = error_of([&] { index_select(x, 1, si); });
    CHECK(contains(cpu_select, "index_select: index " + std::to_string(bad)));
    CHECK(error_of([&] { index_select(xg, 1, gpu(si)); }) == cpu_select);
  }
}

}  // namespace
}  // namespace prism
