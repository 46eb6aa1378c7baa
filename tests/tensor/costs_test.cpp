// Cost formulas (kernels/costs.h) from shapes alone, and the costs the profiler records for real
// op calls: they must be exactly the formulas' numbers (DESIGN.md: one multiply-add = 2 FLOPs
// = 1 MAC; bytes = every input element read once + every output element written once).
#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

#include "kernels/costs.h"
#include "kernels/ops/copy/op.h"
#include "kernels/ops/elementwise/op.h"
#include "kernels/ops/matmul/op.h"
#include "kernels/ops/reduce/op.h"
#include "kernels/ops/softmax/op.h"
#include "kernels/registry.h"
#include "profiler/session.h"
#include "tests/records.h"
#include "tests/tensor/reference.h"

namespace prism {

namespace {

using profiler::Cost;
using profiler::OpRecord;
using profiler::Phase;
using testing::only;
using testing::record;

// ---- the formulas -----------------------------------------------------------------------------

TEST_CASE("costs::matmul: 2 m n k FLOPs, m n k MACs, bytes of A + B + C") {
  // mm(4x5, 5x6): 4*6 outputs, each a 5-term dot product.
  CHECK(costs::matmul({4, 5}, {5, 6}, 4) == Cost{240, 120, (20 + 30 + 24) * 4});
  CHECK(costs::matmul({4, 5}, {5, 6}, 8) == Cost{240, 120, (20 + 30 + 24) * 8});
  // bmm(3x4x5, 3x5x6): three of the above.
  CHECK(costs::matmul({3, 4, 5}, {3, 5, 6}, 4) == Cost{720, 360, (60 + 90 + 72) * 4});
  // A broadcast batch: [2,1] x [3] batch dims -> 6 products; each operand is read once.
  CHECK(costs::matmul({2, 1, 4, 5}, {3, 5, 6}, 4) == Cost{1440, 720, (40 + 90 + 6 * 24) * 4});
  CHECK(costs::matmul({4, 5}, {3, 5, 6}, 4) == Cost{720, 360, (20 + 90 + 72) * 4});
  CHECK(costs::matmul({3, 4, 5}, {5, 6}, 4) == Cost{720, 360, (60 + 30 + 72) * 4});
  // Vectors, promoted: [5] @ [5] is [1,5] @ [5,1].
  CHECK(costs::matmul({1, 5}, {5, 1}, 4) == Cost{10, 5, (5 + 5 + 1) * 4});
  // Empty and k = 0 products cost no FLOPs.
  CHECK(costs::matmul({0, 5}, {5, 6}, 4) == Cost{0, 0, (0 + 30 + 0) * 4});
  CHECK(costs::matmul({4, 0}, {0, 6}, 4) == Cost{0, 0, 24 * 4});
}

TEST_CASE("costs::elementwise: FLOPs per output element, each input's own bytes once") {
  // [3,1,5] + [4,1] -> [3,4,5]: 60 adds; the [4,1] input is 4 elements, read once.
  CHECK(costs::elementwise({3, 4, 5}, 1, (15 + 4) * 4, 4) == Cost{60, 0, (15 + 4 + 60) * 4});
  CHECK(costs::elementwise({7, 13}, 8, 91 * 8, 8) == Cost{728, 0, 2 * 91 * 8});
  CHECK(costs::elementwise({}, 1, 8, 4) == Cost{1, 0, 8 + 4});
  CHECK(costs::elementwise({0, 3}, 1, 0, 4) == Cost{0, 0, 0});
}

TEST_CASE("costs::reduce, costs::softmax and costs::copy") {
  // sum of [7,13] over dim 1: 12 adds per row, 7 rows.
  CHECK(costs::reduce(91, 7, 4, 4) == Cost{84, 0, 91 * 4 + 7 * 4});
  CHECK(costs::reduce(91, 1, 8, 8) == Cost{90, 0, 91 * 8 + 8});
  CHECK(costs::reduce(5, 5, 4, 4) == Cost{0, 0, 40});  // reducing a size-1 dim: no adds
  CHECK(costs::reduce(0, 3, 4, 4) == Cost{0, 0, 12});  // never negative
  CHECK(costs::softmax(60, 4) == Cost{240, 0, 2 * 60 * 4});
  CHECK(costs::softmax_backward(60, 4) == Cost{240, 0, 3 * 60 * 4});
  CHECK(costs::copy(60, 8) == Cost{0, 0, 2 * 60 * 8});
  CHECK(costs::copy(0, 4) == Cost{});
}

// ---- what the profiler records for real calls
// ----------------------------------------------------

std::string variant_for(const char* op, DType dt) {
  return kernels::registry().at(op, Device::cpu).select(dt).name;
}

TEST_CASE("recorded matmul costs are the formula's") {
  Tensor a = ones({4, 5}), b = ones({5, 6});
  auto recs = record([&] { matmul(a, b); });
  OpRecord r = only(recs, "matmul");
  CHECK(r.cost == Cost{240, 120, 296});
  CHECK(r.variant == variant_for("matmul", DType::f32));
  CHECK(std::string(r.device) == "cpu");
  CHECK(r.shapes.to_string() == "[4,5] [5,6]");

  Tensor a3 = ones({3, 4, 5}), b3 = ones({3, 5, 6});
  CHECK(only(record([&] { matmul(a3, b3); }), "matmul").cost == Cost{720, 360, 888});

  // Broadcast batch: recorded once, with each operand's own bytes (the copy that expands A
  // for the kernel shows up as its own "contiguous" row, not inside matmul's bytes).
  Tensor ab = ones({2, 1, 4, 5});
  OpRecord rb = only(record([&] { matmul(ab, b3); }), "matmul");
  CHECK(rb.cost == Cost{1440, 720, (40 + 90 + 6 * 24) * 4});

  // Vectors are costed as the promoted matrices.
  Tensor v = ones({5}, DType::f64);
  CHECK(only(record([&] { matmul(v, v); }), "matmul").cost == Cost{10, 5, 11 * 8});
  Tensor m = ones({5, 3}, DType::f64);
  CHECK(only(record([&] { matmul(v, m); }), "matmul").cost == Cost{30, 15, (5 + 15 + 3) * 8});
}

TEST_CASE("recorded elementwise costs count a broadcast input once") {
  Tensor a = ones({3, 1, 5}), b = ones({4, 1});
  OpRecord r = only(record([&] { add(a, b); }), "add");
  CHECK(r.cost == Cost{60, 0, (15 + 4 + 60) * 4});
  CHECK(r.variant == variant_for("add", DType::f32));
  CHECK(r.shapes.to_string() == "[3,1,5] [4,1]");

  Tensor x = ones({7, 13}, DType::f64), s = scalar(2, DType::f64);
  CHECK(only(record([&] { mul(s, x); }), "mul").cost == Cost{91, 0, (1 + 91 + 91) * 8});
  CHECK(only(record([&] { prism::exp(x); }), "exp").cost == Cost{91, 0, 2 * 91 * 8});
  CHECK(only(record([&] { gelu(x); }), "gelu").cost == Cost{8 * 91, 0, 2 * 91 * 8});
  CHECK(only(record([&] { sigmoid(x); }), "sigmoid").cost == Cost{3 * 91, 0, 2 * 91 * 8});
  CHECK(only(record([&] { silu(x); }), "silu").cost == Cost{4 * 91, 0, 2 * 91 * 8});
  // silu's gradient is one elementwise op, silu_backward(x, g): 8 steps, reads x and g.
  Tensor xs = ones({7, 13}, DType::f64).set_requires_grad();
  const auto recs = record([&] { silu(xs).backward(ones({7, 13}, DType::f64)); });
  const OpRecord silu_bw = only(recs, "silu_backward", Phase::backward);
  CHECK(silu_bw.cost == Cost{8 * 91, 0, 3 * 91 * 8});
  CHECK(std::string(silu_bw.grad_of) == "silu.dx");
  // A strided input is still its own elements once.
  CHECK(only(record([&] { relu(x.t()); }), "relu").cost == Cost{91, 0, 2 * 91 * 8});
}

TEST_CASE("recorded reduction, softmax and copy costs") {
  Tensor x = ones({7, 13});
  CHECK(only(record([&] { sum(x, {1}); }), "sum").cost == Cost{84, 0, 91 * 4 + 7 * 4});
  CHECK(only(record([&] { sum(x); }), "sum").cost == Cost{90, 0, 91 * 4 + 4});
  // mean of [7,13] over dim 0: 6 adds + 1 divide per output, 13 outputs.
  CHECK(only(record([&] { mean(x, {0}, true); }), "mean").cost == Cost{91, 0, 91 * 4 + 13 * 4});
  // max writes a value and an int64 index per output; argmax only the index.
  CHECK(only(record([&] { max(x, 1); }), "max").cost == Cost{84, 0, 91 * 4 + 7 * (4 + 8)});
  CHECK(only(record([&] { argmax(x, 1); }), "argmax").cost == Cost{84, 0, 91 * 4 + 7 * 8});
  CHECK(only(record([&] { softmax(x, 0); }), "softmax").cost == Cost{4 * 91, 0, 2 * 91 * 4});
  CHECK(only(record([&] { log_softmax(x); }), "log_softmax").cost == Cost{4 * 91, 0, 2 * 91 * 4});
  CHECK(only(record([&] { contiguous(x.t()); }), "contiguous").cost == Cost{0, 0, 2 * 91 * 4});
  CHECK(only(record([&] { clone(x); }), "clone").cost == Cost{0, 0, 2 * 91 * 4});
  CHECK(only(record([&] { cast(x, DType::f64); }), "cast").cost == Cost{0, 0, 91 * (4 + 8)});
  Tensor y = ones({7, 2});
  CHECK(only(record([&] { concat({x, y}, 1); }), "concat").cost == Cost{0, 0, 2 * 105 * 4});
  Tensor idx = from_vector(std::vector<int64_t>{0, 6, 6}, {3});
  CHECK(only(record([&] { index_select(x, 0, idx); }), "index_select").cost ==
        Cost{0, 0, 3 * 8 + 2 * 39 * 4});
  Tensor gidx = zeros({7, 2}, DType::i64);
  CHECK(only(record([&] { gather(x, 1, gidx); }), "gather").cost ==
        Cost{0, 0, 14 * 8 + 2 * 14 * 4});
  // contiguous() of a contiguous tensor is free: no record at all.
  auto none = record([&] { contiguous(x); });
  for (const OpRecord& r : none) CHECK(std::string(r.op) != "contiguous");
}

TEST_CASE("backward rows carry their own costs, one per gradient") {
  Tensor a = ones({4, 5}), b = ones({5, 6});
  a.set_requires_grad();
  b.set_requires_grad();
  auto recs = record([&] {
    Tensor y = matmul(a, b);
    y.backward(ones({4, 6}));
  });
  std::vector<OpRecord> bw;
  for (const OpRecord& r : recs) {
    if (std::string(r.op) == "matmul" && r.phase == Phase::backward) bw.push_back(r);
  }
  REQUIRE(bw.size() == 2);
  for (const OpRecord& r : bw) {
    const std::string label = r.grad_of;
    INFO(label);
    if (label == "matmul.dA") {
      CHECK(r.cost == Cost{240, 120, (24 + 30 + 20) * 4});  // [4,6] @ [6,5]
      CHECK(r.shapes.to_string() == "[4,6] [6,5]");
    } else {
      CHECK(label == "matmul.dB");
      CHECK(r.cost == Cost{240, 120, (20 + 24 + 30) * 4});  // [5,4] @ [4,6]
      CHECK(r.shapes.to_string() == "[5,4] [4,6]");
    }
  }
  CHECK(std::string(bw[0].grad_of) != std::string(bw[1].grad_of));
  CHECK(only(recs, "matmul").cost == Cost{240, 120, 296});  // the forward row is unchanged
}

// Issue 12, finding 4: sizes that are each within limits can multiply past 2^63 in a cost
// formula. The count is checked (costs::Count), and the error names the op.
TEST_CASE("cost counts that would overflow int64 are an error naming the op, sums saturate") {
  const int64_t n = int64_t{1} << 24;  // [2^24, 2^24] float32 is 2^50 bytes: the largest tensor
  DefaultDevice meta(Device::meta);
  const Tensor a = empty({n, n});
  {
    profiler::Session session;  // costs are computed only while recording
    std::string what = "(no error)";
    try {
      (void)matmul(a, a);  // 2^72 multiply-adds
    } catch (const Error& e) {
      what = e.what();
    }
    CHECK(what ==
          "matmul: a FLOP, MAC or byte count exceeds 2^63 - 1: the shapes are too large "
          "to count in int64");
  }
  // The same product without a session computes no cost at all: nothing to overflow.
  CHECK(matmul(a, a).shape() == Dims{n, n});
  CHECK((costs::Count(3) * 4 + 5).value() == 17);
  CHECK_THROWS_AS(costs::Count(INT64_MAX) + 1, Error);
  CHECK_THROWS_AS(costs::Count(INT64_MIN) - 1, Error);
  CHECK(profiler::saturating_add(INT64_MAX - 1, 5) == INT64_MAX);
  CHECK(profiler::saturating_add(INT64_MIN + 1, -5) == INT64_MIN);
  Cost c{INT64_MAX - 2, 1, 2};
  c += Cost{10, 10, 10};
  CHECK(c == Cost{INT64_MAX, 11, 12});
}

}  // namespace
}  // namespace prism
