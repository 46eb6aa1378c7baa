// Memory and the profiler: which calls allocate, how much, with which role, attributed to which
// op record; and the records a forward + backward leaves (phase, grad_of, scope, FLOPs).
#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "profiler/aggregate.h"
#include "profiler/memory.h"
#include "profiler/session.h"
#include "tensor/ops.h"
#include "tensor/tensor.h"

using prism::Dims;
using prism::DType;
using prism::MemRole;
using prism::Tensor;
using prism::profiler::MemoryStats;
using prism::profiler::OpRecord;
using prism::profiler::Phase;
using prism::profiler::Profile;
using prism::profiler::Session;

namespace {

MemoryStats stats() {
  return prism::profiler::memory_stats(0);
}
int64_t role_bytes(const MemoryStats& s, MemRole r) {
  return s.live_by_role[static_cast<size_t>(r)];
}

std::vector<const OpRecord*> ops_named(const Profile& p, std::string_view op) {
  std::vector<const OpRecord*> out;
  for (const OpRecord& r : p.recording.records) {
    if (r.kind == prism::profiler::Kind::op && op == r.op) out.push_back(&r);
  }
  return out;
}

std::vector<const OpRecord*> ops_in_phase(const Profile& p, Phase phase) {
  std::vector<const OpRecord*> out;
  for (const OpRecord& r : p.recording.records) {
    if (r.kind == prism::profiler::Kind::op && r.phase == phase) out.push_back(&r);
  }
  return out;
}

const std::string& scope_of(const Profile& p, const OpRecord& r) {
  return p.recording.scope_paths.at(static_cast<size_t>(r.scope));
}

}  // namespace

TEST_CASE("memory: views allocate nothing and open no records") {
  Tensor x = prism::arange(24);
  Session session;
  const MemoryStats before = stats();
  {
    Tensor v = x.view({2, 3, 4}).permute({2, 0, 1}).narrow(0, 1, 2).select(1, 0);
    Tensor e = x.slice(0, 0, 24, 6).unsqueeze(1).expand({4, 8}).t();
    Tensor f = x.reshape({4, 6}).flatten().squeeze().detach();
    CHECK(v.shares_storage_with(x));
    CHECK(e.shares_storage_with(x));
    CHECK(f.shares_storage_with(x));
  }
  const MemoryStats after = stats();
  const Profile& p = session.stop();
  CHECK(after.alloc_count == before.alloc_count);
  CHECK(after.alloc_bytes == before.alloc_bytes);
  CHECK(after.live_bytes == before.live_bytes);
  CHECK(p.recording.records.empty());
}

TEST_CASE("memory: an op allocates exactly its output, attributed to its record") {
  Tensor a = prism::ones({4, 5});
  Tensor b = prism::ones({5});
  Session session;
  const MemoryStats before = stats();
  Tensor c = prism::add(a, b);
  const MemoryStats after = stats();
  const Profile& p = session.stop();

  CHECK(after.alloc_count - before.alloc_count == 1);
  CHECK(after.alloc_bytes - before.alloc_bytes == 4 * 5 * 4);
  CHECK(after.live_bytes - before.live_bytes == 80);

  auto adds = ops_named(p, "add");
  REQUIRE(adds.size() == 1);
  CHECK(adds[0]->allocs == 1);
  CHECK(adds[0]->alloc_bytes == 80);
  CHECK(adds[0]->phase == Phase::forward);
  CHECK(adds[0]->shapes.to_string() == "[4,5] [5]");
  CHECK(adds[0]->cost.flops == 20);

  auto rows = prism::profiler::aggregate_ops(p);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].name == "add");
  CHECK(rows[0].calls == 1);
  CHECK(rows[0].allocs == 1);
  CHECK(rows[0].alloc_bytes == 80);

  // float64 doubles the bytes.
  Tensor d = prism::ones({3}, DType::f64);
  Session s2;
  Tensor e = d * d;
  const Profile& p2 = s2.stop();
  auto muls = ops_named(p2, "mul");
  REQUIRE(muls.size() == 1);
  CHECK(muls[0]->allocs == 1);
  CHECK(muls[0]->alloc_bytes == 24);
}

TEST_CASE("memory: contiguous() of a transposed 3x5 allocates 60 bytes") {
  Tensor x = prism::ones({3, 5});
  Tensor t = x.t();
  Session session;
  const MemoryStats before = stats();
  Tensor c = t.contiguous();
  const MemoryStats after = stats();
  Tensor again = c.contiguous();  // already contiguous: free
  const MemoryStats after2 = stats();
  const Profile& p = session.stop();

  CHECK(after.alloc_count - before.alloc_count == 1);
  CHECK(after.alloc_bytes - before.alloc_bytes == 60);
  CHECK(after2.alloc_count == after.alloc_count);
  auto recs = ops_named(p, "contiguous");
  REQUIRE(recs.size() == 1);
  CHECK(recs[0]->allocs == 1);
  CHECK(recs[0]->alloc_bytes == 60);
  CHECK(recs[0]->cost.bytes == 120);  // read 60, write 60
  CHECK(c.storage()->nbytes() == 60);
}

TEST_CASE("memory: factories allocate inside their own record") {
  Session session;
  Tensor z = prism::zeros({2, 8});
  Tensor r = prism::arange(0, 10, 1, DType::i64);
  const Profile& p = session.stop();
  auto zs = ops_named(p, "zeros");
  auto ar = ops_named(p, "arange");
  REQUIRE(zs.size() == 1);
  REQUIRE(ar.size() == 1);
  CHECK(zs[0]->allocs == 1);
  CHECK(zs[0]->alloc_bytes == 64);
  CHECK(ar[0]->alloc_bytes == 80);
}

TEST_CASE("memory: AllocRole tags new buffers and live_by_role follows them") {
  const MemoryStats before = stats();
  {
    Tensor act = prism::zeros({10});  // the default role
    CHECK(act.storage()->role() == MemRole::activation);
    Tensor p;
    {
      prism::AllocRole role(MemRole::parameter);
      CHECK(prism::current_alloc_role() == MemRole::parameter);
      p = prism::zeros({25});
      {
        prism::AllocRole inner(MemRole::optimizer);
        Tensor o = prism::zeros({2}, DType::f64);
        CHECK(o.storage()->role() == MemRole::optimizer);
        CHECK(role_bytes(stats(), MemRole::optimizer) - role_bytes(before, MemRole::optimizer) ==
              16);
      }
      CHECK(prism::current_alloc_role() == MemRole::parameter);
    }
    CHECK(prism::current_alloc_role() == MemRole::activation);
    CHECK(p.storage()->role() == MemRole::parameter);
    MemoryStats mid = stats();
    CHECK(role_bytes(mid, MemRole::parameter) - role_bytes(before, MemRole::parameter) == 100);
    CHECK(role_bytes(mid, MemRole::activation) - role_bytes(before, MemRole::activation) == 40);
    CHECK(role_bytes(mid, MemRole::optimizer) == role_bytes(before, MemRole::optimizer));
    // A view of a parameter is not a new buffer: nothing moves.
    Tensor v = p.view({5, 5}).t();
    CHECK(role_bytes(stats(), MemRole::parameter) == role_bytes(mid, MemRole::parameter));

    // Re-tagging moves the bytes without counting an allocation.
    act.storage()->set_role(MemRole::data);
    MemoryStats re = stats();
    CHECK(re.alloc_count == mid.alloc_count);
    CHECK(role_bytes(re, MemRole::data) - role_bytes(before, MemRole::data) == 40);
    CHECK(role_bytes(re, MemRole::activation) == role_bytes(before, MemRole::activation));
    CHECK(re.live_bytes == mid.live_bytes);
  }
  // Everything is freed from the role it was in at the end.
  const MemoryStats after = stats();
  CHECK(after.live_bytes == before.live_bytes);
  for (int r = 0; r < prism::profiler::kNumRoles; ++r) {
    CAPTURE(r);
    CHECK(after.live_by_role[static_cast<size_t>(r)] ==
          before.live_by_role[static_cast<size_t>(r)]);
  }
}

TEST_CASE("memory: live bytes return to their value once tensors are gone") {
  const MemoryStats before = stats();
  {
    Tensor x = prism::randn({100});
    x.set_requires_grad();
    Tensor w = prism::randn({100});
    w.set_requires_grad();
    Tensor loss = prism::sum(prism::exp(x * w) + x);
    CHECK(stats().live_bytes > before.live_bytes);
    loss.backward();
    CHECK(x.grad().defined());
    CHECK(stats().live_bytes > before.live_bytes);
  }
  const MemoryStats after = stats();
  CHECK(after.live_bytes == before.live_bytes);
  CHECK(after.alloc_count - before.alloc_count == after.free_count - before.free_count);
  CHECK(after.peak_bytes >= before.peak_bytes);
}

TEST_CASE("memory: backward frees what forward saved and keeps only the leaf gradients") {
  Tensor x = prism::ones({64});
  x.set_requires_grad();
  const MemoryStats before = stats();
  Tensor loss = prism::sum(prism::exp(x) * prism::exp(x));
  const MemoryStats after_forward = stats();
  CHECK(after_forward.live_bytes > before.live_bytes);
  loss.backward();
  const MemoryStats after_backward = stats();
  // Live now: loss (4 bytes, an activation) and x.grad (256 bytes, a gradient).
  CHECK(x.grad().storage()->role() == MemRole::gradient);
  CHECK(role_bytes(after_backward, MemRole::gradient) - role_bytes(before, MemRole::gradient) ==
        256);
  CHECK(role_bytes(after_backward, MemRole::activation) - role_bytes(before, MemRole::activation) ==
        4);
  CHECK(after_backward.live_bytes - before.live_bytes == 260);
}

TEST_CASE("memory: backward buffers are gradients, recorded in the backward phase") {
  Tensor x = prism::full({8}, 2);
  x.set_requires_grad();
  Tensor w = prism::full({8}, 3);
  w.set_requires_grad();
  Tensor loss = prism::sum(x * w);
  const MemoryStats before = stats();
  Session session;
  loss.backward();
  const Profile& p = session.stop();
  const MemoryStats after = stats();

  auto bw = ops_in_phase(p, Phase::backward);
  REQUIRE_FALSE(bw.empty());
  CHECK(ops_in_phase(p, Phase::forward).empty());
  // The implicit root gradient is made by backward too.
  auto ones = ops_named(p, "ones");
  REQUIRE(ones.size() == 1);
  CHECK(ones[0]->phase == Phase::backward);
  int64_t bytes = 0, allocs = 0;
  for (const OpRecord* r : bw) {
    if (r->depth == 0) bytes += r->alloc_bytes, allocs += r->allocs;
  }
  // ones (4 bytes) + mul.da (32) + mul.db (32), and nothing else.
  CHECK(allocs == 3);
  CHECK(bytes == 68);
  CHECK(after.alloc_bytes - before.alloc_bytes == 68);
  // What survives is exactly the two leaf gradients, tagged gradient.
  CHECK(role_bytes(after, MemRole::gradient) - role_bytes(before, MemRole::gradient) == 64);
  CHECK(x.grad().storage()->role() == MemRole::gradient);
  CHECK(w.grad().storage()->role() == MemRole::gradient);
  CHECK(x.grad().to_vector() == std::vector<double>(8, 3.0));
  CHECK(w.grad().to_vector() == std::vector<double>(8, 2.0));
  // Backward made no activations.
  CHECK(role_bytes(after, MemRole::activation) <= role_bytes(before, MemRole::activation));
}

TEST_CASE("memory: a leaf keeps a fresh gradient buffer and copies only a shared one") {
  // matmul's dB is a new buffer no one else holds: it becomes b.grad at no cost.
  Tensor a = prism::ones({2, 3});
  Tensor b = prism::ones({3, 4});
  b.set_requires_grad();
  Tensor loss = prism::sum(prism::matmul(a, b));
  Session session;
  loss.backward();
  const Profile& p = session.stop();
  CHECK(ops_named(p, "clone").empty());
  CHECK(b.grad().to_vector() == std::vector<double>(12, 2.0));

  // add hands its incoming gradient (a stride-0 view of one number) to both inputs: each leaf
  // gets its own dense copy, labelled as gradient accumulation.
  Tensor x = prism::ones({5});
  x.set_requires_grad();
  Tensor y = prism::ones({5});
  y.set_requires_grad();
  Tensor l2 = prism::sum(x + y);
  Session s2;
  l2.backward();
  const Profile& p2 = s2.stop();
  auto clones = ops_named(p2, "clone");
  REQUIRE(clones.size() == 2);
  for (const OpRecord* r : clones) {
    CHECK(r->phase == Phase::backward);
    CHECK(std::string_view(r->grad_of) == "accumulate grad");
    CHECK(r->alloc_bytes == 20);
  }
  CHECK(x.grad().storage()->role() == MemRole::gradient);
  CHECK(x.grad().storage()->nbytes() == 20);
}

TEST_CASE("profiler: forward and backward records, grad_of labels, scopes") {
  Tensor x = prism::from_vector(std::vector<float>{1, 2, 3}, {3});
  x.set_requires_grad();
  Tensor w = prism::from_vector(std::vector<float>{4, 5, 6}, {3});
  w.set_requires_grad();
  Session session;
  Tensor loss;
  {
    prism::profiler::Scope model("model");
    Tensor y = x * w;
    {
      prism::profiler::Scope head("head");
      loss = prism::sum(y);
    }
  }
  loss.backward();
  const Profile& p = session.stop();

  auto muls = ops_named(p, "mul");
  const OpRecord* fwd_mul = nullptr;
  const OpRecord* da = nullptr;
  const OpRecord* db = nullptr;
  for (const OpRecord* r : muls) {
    if (r->phase == Phase::forward) fwd_mul = r;
    if (r->phase == Phase::backward && std::string_view(r->grad_of) == "mul.da") da = r;
    if (r->phase == Phase::backward && std::string_view(r->grad_of) == "mul.db") db = r;
  }
  REQUIRE(fwd_mul != nullptr);
  REQUIRE(da != nullptr);
  REQUIRE(db != nullptr);
  CHECK(std::string_view(fwd_mul->grad_of).empty());
  CHECK(scope_of(p, *fwd_mul) == "model");
  // Backward runs under the forward op's scope, so the module's gradient work lands on it.
  CHECK(scope_of(p, *da) == "model");
  CHECK(scope_of(p, *db) == "model");

  auto sums = ops_named(p, "sum");
  REQUIRE(sums.size() == 1);
  CHECK(sums[0]->phase == Phase::forward);
  CHECK(scope_of(p, *sums[0]) == "model.head");

  // The scopes are records of their own, and the forward ops nest inside them.
  int scopes = 0;
  for (const OpRecord& r : p.recording.records) {
    if (r.kind == prism::profiler::Kind::scope) ++scopes;
  }
  CHECK(scopes == 2);
  REQUIRE(fwd_mul->parent >= 0);
  CHECK(p.recording.records[static_cast<size_t>(fwd_mul->parent)].kind ==
        prism::profiler::Kind::scope);

  // The aggregate keeps forward and each gradient as separate rows.
  auto rows = prism::profiler::aggregate_ops(p);
  int mul_rows = 0;
  bool saw_da = false, saw_db = false;
  for (const auto& r : rows) {
    if (r.name != "mul") continue;
    ++mul_rows;
    saw_da = saw_da || (r.phase == Phase::backward && r.grad_of == "mul.da");
    saw_db = saw_db || (r.phase == Phase::backward && r.grad_of == "mul.db");
  }
  CHECK(mul_rows == 3);
  CHECK(saw_da);
  CHECK(saw_db);

  CHECK(x.grad().to_vector() == std::vector<double>{4, 5, 6});
  CHECK(w.grad().to_vector() == std::vector<double>{1, 2, 3});
}

TEST_CASE("profiler: matmul records carry 2*m*n*k FLOPs, forward and backward") {
  const int64_t m = 3, k = 4, n = 5;
  Tensor a = prism::randn({m, k});
  a.set_requires_grad();
  Tensor b = prism::randn({k, n});
  b.set_requires_grad();
  Session session;
  Tensor c;
  {
    prism::profiler::Scope layer("layer");
    c = prism::matmul(a, b);
  }
  prism::sum(c).backward();
  const Profile& p = session.stop();

  auto mm = ops_named(p, "matmul");
  REQUIRE(mm.size() == 3);  // forward, dA, dB
  const OpRecord* fwd = nullptr;
  const OpRecord* dA = nullptr;
  const OpRecord* dB = nullptr;
  for (const OpRecord* r : mm) {
    if (r->phase == Phase::forward) fwd = r;
    if (std::string_view(r->grad_of) == "matmul.dA") dA = r;
    if (std::string_view(r->grad_of) == "matmul.dB") dB = r;
  }
  REQUIRE(fwd != nullptr);
  REQUIRE(dA != nullptr);
  REQUIRE(dB != nullptr);
  CHECK(fwd->cost.flops == 2 * m * n * k);
  CHECK(fwd->cost.macs == m * n * k);
  CHECK(fwd->cost.bytes == (m * k + k * n + m * n) * 4);
  CHECK(fwd->shapes.to_string() == "[3,4] [4,5]");
  CHECK(fwd->allocs == 1);
  CHECK(fwd->alloc_bytes == m * n * 4);
  // dA = g[m,n] @ B^T[n,k]; dB = A^T[k,m] @ g[m,n]: the same multiply-adds.
  CHECK(dA->phase == Phase::backward);
  CHECK(dA->cost.flops == 2 * m * n * k);
  CHECK(dB->cost.flops == 2 * m * n * k);
  CHECK(dA->shapes.to_string() == "[3,5] [5,4]");
  CHECK(dB->shapes.to_string() == "[4,3] [3,5]");
  CHECK(scope_of(p, *fwd) == "layer");
  CHECK(scope_of(p, *dA) == "layer");
  CHECK(scope_of(p, *dB) == "layer");
  CHECK(a.grad().shape() == Dims{m, k});
  CHECK(b.grad().shape() == Dims{k, n});
}

TEST_CASE("profiler: a failing op leaves the recorder balanced") {
  Tensor x = prism::ones({2, 3});
  Tensor idx = prism::from_vector(std::vector<int64_t>{0, 7}, {2, 1});
  Session session;
  CHECK_THROWS_AS((void)prism::gather(x, 1, idx), prism::Error);
  Tensor y = x + x;
  const Profile& p = session.stop();
  auto g = ops_named(p, "gather");
  REQUIRE(g.size() == 1);
  auto adds = ops_named(p, "add");
  REQUIRE(adds.size() == 1);
  // The add is a top-level record, not nested inside a gather left open.
  CHECK(adds[0]->depth == 0);
  CHECK(adds[0]->parent == -1);
  CHECK(y.to_vector() == std::vector<double>(6, 2.0));
}
