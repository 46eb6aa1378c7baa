// Every CPU op class at sizes past its grain (kernels/cpu/parallel.h), so its kernel really
// splits the work: the outputs and gradients are bit-identical at 1 thread, at 2, and again at
// 2 (chunks are fixed by the shapes, never by the thread count), and the profiler records the
// threads each op ran on. `make tsan` runs this file under ThreadSanitizer too.
#include <doctest/doctest.h>
#include <omp.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "kernels/split_rule.h"
#include "profiler/aggregate.h"
#include "profiler/session.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/ops.h"
#include "tensor/optim_ops.h"
#include "tensor/random.h"

namespace prism {
namespace {

// Sets OpenMP's thread count for a scope.
class Threads {
 public:
  explicit Threads(int n) : saved_(omp_get_max_threads()) { omp_set_num_threads(n); }
  ~Threads() { omp_set_num_threads(saved_); }
  Threads(const Threads&) = delete;
  Threads& operator=(const Threads&) = delete;

 private:
  int saved_;
};

Tensor leaf(const Tensor& t) {
  Tensor l = t.detach();
  l.set_requires_grad();
  return l;
}

// One case: make the inputs (from a fixed seed), run forward and backward, and return every
// tensor a kernel wrote: the output, then each input's gradient.
struct Case {
  std::string name;
  std::vector<std::string> ops;  // the ops whose rows must show 2 threads
  std::function<std::vector<Tensor>()> run;
};

// Runs f on fresh leaves made from `inputs`, backward from a fixed random gradient of its
// output; returns the output and the gradients of the float inputs.
std::vector<Tensor> forward_backward(const std::vector<Tensor>& inputs,
                                     const std::function<Tensor(const std::vector<Tensor>&)>& f) {
  std::vector<Tensor> leaves;
  for (const Tensor& t : inputs) leaves.push_back(t.dtype() == DType::i64 ? t : leaf(t));
  Tensor y = f(leaves);
  manual_seed(99);
  y.backward(randn(y.shape()));
  std::vector<Tensor> out{y};
  for (const Tensor& l : leaves) {
    if (l.dtype() != DType::i64) out.push_back(l.grad());
  }
  return out;
}

// int64 indices in [0, high) of the given shape, from a fixed linear congruential sequence.
Tensor ids(int64_t high, const Dims& shape) {
  std::vector<int64_t> v(static_cast<size_t>(shape.numel()));
  uint64_t x = 12345;
  for (int64_t& e : v) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    e = static_cast<int64_t>((x >> 33) % static_cast<uint64_t>(high));
  }
  return from_vector(v, shape);
}

// An Adam step through `variant` on 300007 parameters (past the optimizer's grain), with
// weight decay as L2 (its gradient temporary) or decoupled (AdamW).
Case adam_case(const char* variant, bool decoupled, uint64_t seed) {
  return {std::string("adam_update, ") + variant + (decoupled ? ", decoupled" : ", L2"),
          {"adam_update"},
          [=] {
            kernels::Use use("adam_update", variant);
            manual_seed(seed);
            Tensor p = randn({300007}), g = randn({300007});
            Tensor m = zeros({300007}), v = zeros({300007});
            AdamHyper h;
            h.weight_decay = 0.01;
            h.decoupled = decoupled;
            adam_update_(p, g, m, v, h);
            return std::vector<Tensor>{p, m, v};
          }};
}

// An SGD step with momentum through `variant`; every_pass adds weight decay and Nesterov.
Case sgd_case(const char* variant, bool every_pass, uint64_t seed) {
  return {std::string("sgd_update, ") + variant + (every_pass ? ", decay and Nesterov" : ""),
          {"sgd_update"},
          [=] {
            kernels::Use use("sgd_update", variant);
            manual_seed(seed);
            Tensor p = randn({300007}), g = randn({300007});
            Tensor vel = every_pass ? randn({300007}) : zeros({300007});
            SgdHyper h;
            h.momentum = 0.9;
            if (every_pass) {
              h.weight_decay = 0.01;
              h.nesterov = true;
            }
            sgd_update_(p, g, vel, h);
            return std::vector<Tensor>{p, vel};
          }};
}

std::vector<Case> cases() {
  using V = std::vector<Tensor>;
  std::vector<Case> c;
  auto seeded = [](uint64_t s) { manual_seed(s); };
  // Elementwise: transcendental unary on a transposed (strided) view, and a broadcast binary.
  c.push_back({"gelu, strided", {"gelu", "gelu_backward"}, [=] {
                 seeded(1);
                 return forward_backward({randn({301, 257})},
                                         [](const V& in) { return gelu(in[0].transpose(0, 1)); });
               }});
  c.push_back({"mul, broadcast", {"mul"}, [=] {
                 seeded(2);
                 return forward_backward({randn({97, 1, 1031}), randn({53, 1})},
                                         [](const V& in) { return mul(in[0], in[1]); });
               }});
  // SwiGLU, forward and backward: gate read through a transpose (column stride != 1), and gate
  // and up the two halves of one [rows, 2 hidden] projection. Rows of 131 and 257 elements, so
  // chunks of elements start and end mid-row.
  c.push_back({"swiglu, strided", {"swiglu", "swiglu_backward"}, [=] {
                 seeded(18);
                 return forward_backward({randn({131, 67}), randn({67, 131})}, [](const V& in) {
                   return swiglu(in[0].transpose(0, 1), in[1]);
                 });
               }});
  c.push_back({"swiglu, halves of one projection", {"swiglu", "swiglu_backward"}, [=] {
                 seeded(19);
                 return forward_backward({randn({61, 2 * 257})}, [](const V& in) {
                   return swiglu(in[0].slice(-1, 0, 257), in[0].slice(-1, 257, 2 * 257));
                 });
               }});
  // GEMM-based ops, past the matmul's kParallelGemmMacs (4M multiply-adds): the threads split C
  // into blocks and every element keeps its order of additions, so the bits do not change.
  c.push_back({"matmul", {"matmul"}, [=] {
                 seeded(20);
                 return forward_backward({randn({257, 263}), randn({263, 131})},
                                         [](const V& in) { return matmul(in[0], in[1]); });
               }});
  // dx = g @ W of a small batch (m <= 224) over a row-major W with k >= 256 runs split-k: two
  // halves of k, one per thread, added after (kernels/ops/matmul/optimized.cpp, split_k_form); an
  // odd k makes the halves unequal.
  c.push_back({"matmul, split-k", {"matmul"}, [=] {
                 seeded(23);
                 return forward_backward({randn({67, 509}), randn({509, 197})},
                                         [](const V& in) { return matmul(in[0], in[1]); });
               }});
  // The grid at 2 threads cuts 15 rows into 14 + 1 and a 20 x 32 product over a long k into
  // blocks small enough for the dot form; each block still takes the whole product's path.
  c.push_back({"matmul, a one-row block", {"matmul"}, [=] {
                 seeded(25);
                 return forward_backward({randn({15, 9001}), randn({9001, 32})},
                                         [](const V& in) { return matmul(in[0], in[1]); });
               }});
  c.push_back({"matmul, blocks of the dot form", {"matmul"}, [=] {
                 seeded(26);
                 return forward_backward({randn({20, 8192}), randn({32, 8192})}, [](const V& in) {
                   return matmul(in[0], in[1].transpose(0, 1));
                 });
               }});
  // One row (a decoding step): past kParallelGemvMacs the threads split the columns of C, each
  // output one dot product (or one run of axpys) over all of k on any thread count. Forward
  // only: backward's [k, 1] @ [1, n] is no gemv.
  c.push_back({"matmul, one row over a transposed weight", {"matmul"}, [=] {
                 seeded(27);
                 NoGrad no_grad;
                 const Tensor x = randn({1, 769}), w = randn({2305, 769});
                 return std::vector<Tensor>{matmul(x, w.transpose(0, 1))};
               }});
  c.push_back({"matmul, one row over a row-major matrix", {"matmul"}, [=] {
                 seeded(28);
                 NoGrad no_grad;
                 return std::vector<Tensor>{matmul(randn({1, 769}), randn({769, 1031}))};
               }});
  c.push_back({"linear_gelu, one row", {"linear_gelu"}, [=] {
                 seeded(29);
                 NoGrad no_grad;
                 return std::vector<Tensor>{
                     linear_gelu(randn({1, 769}), randn({1031, 769}), randn({1031}))};
               }});
  c.push_back({"linear_gelu, two row tiles", {"linear_gelu"}, [=] {
                 seeded(21);
                 return forward_backward(
                     {randn({300, 263}), randn({131, 263}), randn({131})},
                     [](const V& in) { return linear_gelu(in[0], in[1], in[2]); });
               }});
  // linear with the ReLU folded in: forward (ReLU as x is packed, bias on each block), dx
  // (split-k: 67 rows, k = 263 outputs, the mask applied to each thread's band of rows) and dW
  // (ReLU as x is packed), each past kParallelGemmMacs.
  c.push_back({"linear, relu input", {"linear"}, [=] {
                 seeded(24);
                 return forward_backward(
                     {randn({67, 509}), randn({263, 509}), randn({263})},
                     [](const V& in) { return linear(in[0], in[1], in[2], true); });
               }});
  c.push_back({"attention, causal", {"attention", "attention_backward"}, [=] {
                 seeded(22);
                 return forward_backward(
                     {randn({2, 3, 67, 16}), randn({2, 3, 67, 16}), randn({2, 3, 67, 16})},
                     [](const V& in) { return attention(in[0], in[1], in[2], true); });
               }});
  // Reductions: short rows, one long row (split into pieces), and down columns.
  c.push_back(
      {"sum rows", {"sum"}, [=] {
         seeded(3);
         return forward_backward({randn({4099, 67})}, [](const V& in) { return sum(in[0], {1}); });
       }});
  c.push_back(
      {"sum, one long row", {"sum"}, [=] {
         seeded(4);
         return forward_backward({randn({3, 200003})}, [](const V& in) { return sum(in[0], {1}); });
       }});
  c.push_back(
      {"sum down columns", {"sum"}, [=] {
         seeded(5);
         return forward_backward({randn({131, 1031})}, [](const V& in) { return sum(in[0], {0}); });
       }});
  // Row-wise ops.
  c.push_back({"softmax", {"softmax"}, [=] {
                 seeded(6);
                 return forward_backward({randn({1031, 97})},
                                         [](const V& in) { return softmax(in[0], 1); });
               }});
  c.push_back({"layer_norm", {"layer_norm", "layer_norm_backward"}, [=] {
                 seeded(7);
                 return forward_backward(
                     {randn({2053, 131}), randn({131}), randn({131})},
                     [](const V& in) { return layer_norm(in[0], in[1], in[2]); });
               }});
  c.push_back({"rms_norm", {"rms_norm", "rms_norm_backward"}, [=] {
                 seeded(8);
                 return forward_backward({randn({2053, 131}), randn({131})},
                                         [](const V& in) { return rms_norm(in[0], in[1]); });
               }});
  c.push_back({"cross_entropy", {"cross_entropy", "cross_entropy_backward"}, [=] {
                 seeded(9);
                 Tensor target = ids(101, {2053});
                 return forward_backward({randn({2053, 101}), target},
                                         [](const V& in) { return cross_entropy(in[0], in[1]); });
               }});
  // Convolution (batch past several chunks, so dw adds partials) and pooling.
  c.push_back({"conv2d", {"conv2d", "conv2d_backward_input", "conv2d_backward_weight"}, [=] {
                 seeded(10);
                 return forward_backward(
                     {randn({37, 16, 13, 13}), randn({32, 16, 3, 3}), randn({32})},
                     [](const V& in) { return conv2d(in[0], in[1], in[2], 1, 1); });
               }});
  c.push_back({"max_pool2d", {"max_pool2d", "max_pool2d_backward"}, [=] {
                 seeded(11);
                 return forward_backward({randn({64, 16, 26, 26})},
                                         [](const V& in) { return max_pool2d(in[0], 2); });
               }});
  c.push_back({"avg_pool2d, overlapping", {"avg_pool2d", "avg_pool2d_backward"}, [=] {
                 seeded(12);
                 return forward_backward({randn({64, 16, 26, 26})},
                                         [](const V& in) { return avg_pool2d(in[0], 3, 2, 1); });
               }});
  // Index ops: an embedding (index_select, backward index_add with repeated rows), gather.
  c.push_back({"embedding", {"index_select", "index_add"}, [=] {
                 seeded(13);
                 Tensor rows = ids(50, {4001});
                 return forward_backward({randn({50, 256}), rows},
                                         [](const V& in) { return index_select(in[0], 0, in[1]); });
               }});
  c.push_back({"gather", {"gather", "scatter_add"}, [=] {
                 seeded(14);
                 Tensor idx = ids(97, {4001, 61});
                 return forward_backward({randn({4001, 97}), idx},
                                         [](const V& in) { return gather(in[0], 1, in[1]); });
               }});
  c.push_back({"copy of a permuted view", {"contiguous"}, [=] {
                 seeded(15);
                 return forward_backward({randn({61, 67, 71})}, [](const V& in) {
                   return contiguous(in[0].permute({2, 0, 1}));
                 });
               }});
  // Optimizer updates, in place: the fused loops, and the per-tensor (unfused) updates, every
  // pass split on its own.
  c.push_back(adam_case("fused", true, 16));
  c.push_back(sgd_case("fused", false, 17));
  c.push_back(adam_case("per_tensor", false, 23));
  c.push_back(adam_case("per_tensor", true, 24));
  c.push_back(sgd_case("per_tensor", true, 25));
  return c;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  const Tensor ca = contiguous(a), cb = contiguous(b);
  return std::memcmp(ca.data<float>(), cb.data<float>(), static_cast<size_t>(ca.nbytes())) == 0;
}

TEST_CASE("threads: every op class gives the same bits at 1 and 2 threads, run after run") {
  for (const Case& c : cases()) {
    CAPTURE(c.name);
    std::vector<Tensor> one, two, again;
    {
      Threads t(1);
      one = c.run();
    }
    {
      Threads t(2);
      two = c.run();
      again = c.run();
    }
    REQUIRE(one.size() == two.size());
    for (size_t i = 0; i < one.size(); ++i) {
      CAPTURE(i);
      CHECK(same_bits(one[i], two[i]));
      CHECK(same_bits(two[i], again[i]));
    }
  }
}

TEST_CASE("threads: the profile shows each op's threads (2 past the grain, 1 below it)") {
  for (const Case& c : cases()) {
    CAPTURE(c.name);
    Threads t(2);
    profiler::Session session;
    c.run();
    const profiler::Profile& p = session.stop();
    const std::vector<profiler::OpRow> rows = profiler::aggregate_ops(p);
    for (const std::string& op : c.ops) {
      CAPTURE(op);
      int found = 0;
      for (const profiler::OpRow& row : rows) {
        if (row.name != op) continue;
        ++found;
        CHECK(row.threads_max == 2);
      }
      CHECK(found >= 1);
    }
  }
  // A small op stays on one thread: an OpenMP region would cost more than the work.
  Threads t(2);
  profiler::Session session;
  gelu(ones({64}));
  const profiler::Profile& p = session.stop();
  const std::vector<profiler::OpRow> rows = profiler::aggregate_ops(p);
  REQUIRE(rows.size() == 2);  // ones and gelu
  for (const profiler::OpRow& row : rows) {
    CHECK(row.threads_min == 1);
    CHECK(row.threads_max == 1);
  }
}

// The split rule (kernels/split_rule.h) on a machine whose regions would cost a second each (the
// rule caps the cost there): every case's calls stay on one thread, and give the bits they give
// at 1 thread.
TEST_CASE("threads: a costly region keeps each case on one thread, with the same bits") {
  struct Restore {
    ~Restore() { kernels::cpu::set_region_costs({}); }
  } restore;
  for (const Case& c : cases()) {
    CAPTURE(c.name);
    std::vector<Tensor> one;
    {
      Threads t(1);
      one = c.run();
    }
    Threads t(2);
    kernels::cpu::set_region_costs({1e6});
    profiler::Session session;
    const std::vector<Tensor> two = c.run();
    const std::vector<profiler::OpRow> rows = profiler::aggregate_ops(session.stop());
    kernels::cpu::set_region_costs({});
    REQUIRE(one.size() == two.size());
    for (size_t i = 0; i < one.size(); ++i) CHECK(same_bits(one[i], two[i]));
    for (const profiler::OpRow& row : rows) {
      CAPTURE(row.name);
      CHECK(row.threads_max == 1);
    }
  }
}

}  // namespace
}  // namespace prism
