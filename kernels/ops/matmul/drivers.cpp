// matmul's drivers for the variants and determinism tests (tests/ops/drivers.h; compiled into
// the per-op test suite only): matmul on odd sizes: a broadcast batch, sizes past the blocked
// kernels' fast paths and edges, and a vector times a matrix.
#include "tests/ops/drivers.h"
#include "tensor/ops.h"

namespace prism::kernels {
namespace {

const DriverFile kDrivers([](DriverTable& d) {
  d["matmul"] = {
      {[](DType dt, ref::Rng& rng, bool strided) {
         return std::vector<Tensor>{input({2, 1, 37, 29}, strided, dt, rng),
                                    input({3, 29, 41}, strided, dt, rng)};
       },
       [](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); }},
      // Large enough for blocked kernels' fast paths and edges.
      {[](DType dt, ref::Rng& rng, bool strided) {
         return std::vector<Tensor>{input({67, 131}, strided, dt, rng),
                                    input({131, 61}, strided, dt, rng)};
       },
       [](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); }},
      {[](DType dt, ref::Rng& rng, bool strided) {
         return std::vector<Tensor>{input({29}, strided, dt, rng),
                                    input({29, 7}, strided, dt, rng)};
       },
       [](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); }},
  };
});

// The determinism test's cases (tests/ops/determinism_test.cpp): sizes past the kernels'
// grains, so the work really splits over the threads.
const ThreadCaseFile kThreadCases("matmul", [](std::vector<ThreadCase>& c) {
  using V = std::vector<Tensor>;
  // GEMM-based ops, past the matmul's kParallelGemmMacs (4M multiply-adds): the threads split C
  // into blocks and every element keeps its order of additions, so the bits do not change.
  c.push_back({"matmul", {"matmul"}, [] {
                 seeded(20);
                 return forward_backward({randn({257, 263}), randn({263, 131})},
                                         [](const V& in) { return matmul(in[0], in[1]); });
               }});
  // dx = g @ W of a small batch (m <= 224) over a row-major W with k >= 256 runs split-k: two
  // halves of k, one per thread, added after (kernels/ops/matmul/optimized.cpp, split_k_form); an
  // odd k makes the halves unequal.
  c.push_back({"matmul, split-k", {"matmul"}, [] {
                 seeded(23);
                 return forward_backward({randn({67, 509}), randn({509, 197})},
                                         [](const V& in) { return matmul(in[0], in[1]); });
               }});
  // The grid at 2 threads cuts 15 rows into 14 + 1 and a 20 x 32 product over a long k into
  // blocks small enough for the dot form; each block still takes the whole product's path.
  c.push_back({"matmul, a one-row block", {"matmul"}, [] {
                 seeded(25);
                 return forward_backward({randn({15, 9001}), randn({9001, 32})},
                                         [](const V& in) { return matmul(in[0], in[1]); });
               }});
  c.push_back({"matmul, blocks of the dot form", {"matmul"}, [] {
                 seeded(26);
                 return forward_backward({randn({20, 8192}), randn({32, 8192})}, [](const V& in) {
                   return matmul(in[0], in[1].transpose(0, 1));
                 });
               }});
  // One row (a decoding step): past kParallelGemvMacs the threads split the columns of C, each
  // output one dot product (or one run of axpys) over all of k on any thread count. Forward
  // only: backward's [k, 1] @ [1, n] is no gemv.
  c.push_back({"matmul, one row over a transposed weight", {"matmul"}, [] {
                 seeded(27);
                 NoGrad no_grad;
                 const Tensor x = randn({1, 769}), w = randn({2305, 769});
                 return std::vector<Tensor>{matmul(x, w.transpose(0, 1))};
               }});
  c.push_back({"matmul, one row over a row-major matrix", {"matmul"}, [] {
                 seeded(28);
                 NoGrad no_grad;
                 return std::vector<Tensor>{matmul(randn({1, 769}), randn({769, 1031}))};
               }});
});

}  // namespace
}  // namespace prism::kernels
