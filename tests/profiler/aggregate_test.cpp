// Folding records into rows: grouping, inclusive vs self time, summed costs.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "profiler/aggregate.h"
#include "profiler/memory.h"
#include "profiler_test_util.h"

namespace prism::profiler {
namespace {

using testing::busy_wait_ns;
using testing::open_plain;

const OpRow* find_row(const std::vector<OpRow>& rows, const std::string& name,
                      const std::string& variant = "naive", Phase phase = Phase::forward) {
  for (const OpRow& r : rows) {
    if (r.name == name && r.variant == variant && r.phase == phase) return &r;
  }
  return nullptr;
}

TEST_CASE("aggregate_ops: calls, inclusive and self time, costs and allocations") {
  Session session;
  for (int i = 0; i < 3; ++i) {
    int32_t outer = open_plain("agg_outer", "naive", Cost{10, 5, 100});
    busy_wait_ns(30'000);
    int32_t inner = open_plain("agg_inner", "naive", Cost{1000, 500, 7});
    note_alloc(0, MemRole::activation, 256);
    busy_wait_ns(100'000);
    close_op(inner);
    close_op(outer);
  }
  const Profile& p = session.stop();
  const std::vector<OpRow> rows = aggregate_ops(p);
  for (int i = 0; i < 3; ++i) note_free(0, MemRole::activation, 256);

  REQUIRE(rows.size() == 2);
  const OpRow* outer = find_row(rows, "agg_outer");
  const OpRow* inner = find_row(rows, "agg_inner");
  REQUIRE(outer);
  REQUIRE(inner);

  CHECK(outer->calls == 3);
  CHECK(inner->calls == 3);
  CHECK(outer->device == "cpu");
  CHECK(outer->phase == Phase::forward);
  CHECK(outer->grad_of.empty());

  // Inclusive time is the sum of the records' durations.
  int64_t outer_sum = 0;
  int64_t inner_sum = 0;
  for (const OpRecord& r : p.recording.records) {
    (std::string(r.op) == "agg_outer" ? outer_sum : inner_sum) += r.dur_ns;
  }
  CHECK(outer->total_ns == outer_sum);
  CHECK(inner->total_ns == inner_sum);

  // Self time of the outer op excludes the inner op; a leaf's self time is all of its time.
  CHECK(inner->self_ns == inner->total_ns);
  CHECK(outer->self_ns == outer->total_ns - inner->total_ns);
  CHECK(outer->self_ns >= 3 * 30'000);
  CHECK(inner->self_ns >= 3 * 100'000);

  // Largest self time first.
  CHECK(rows[0].name == "agg_inner");
  CHECK(rows[1].name == "agg_outer");

  CHECK(outer->cost == Cost{30, 15, 300});
  CHECK(inner->cost == Cost{3000, 1500, 21});
  CHECK(inner->allocs == 3);
  CHECK(inner->alloc_bytes == 768);
  CHECK(outer->allocs == 3);  // allocations are inclusive, like time
  CHECK(outer->alloc_bytes == 768);

  // Time inside ops counts each nanosecond once: the outer ops' inclusive time.
  CHECK(total_op_self_ns(p) == outer->total_ns);
  CHECK(total_op_self_ns(p) == outer->self_ns + inner->self_ns);
}

TEST_CASE("aggregate_ops: variant, phase and grad_of make separate rows, scopes make none") {
  Session session;
  {
    Scope model("agg_model");
    close_op(open_plain("agg_mm", "naive"));
    close_op(open_plain("agg_mm", "naive"));
    close_op(open_plain("agg_mm", "optimized"));
    PhaseGuard backward(Phase::backward);
    {
      GradOfGuard g("agg_mm.dA");
      close_op(open_plain("agg_mm", "naive"));
    }
    {
      GradOfGuard g("agg_mm.dB");
      close_op(open_plain("agg_mm", "naive"));
      close_op(open_plain("agg_mm", "naive"));
    }
  }
  const Profile& p = session.stop();
  const std::vector<OpRow> rows = aggregate_ops(p);

  REQUIRE(rows.size() == 4);
  int64_t calls = 0;
  for (const OpRow& r : rows) {
    CHECK(r.name == "agg_mm");
    calls += r.calls;
  }
  CHECK(calls == 6);
  CHECK(find_row(rows, "agg_mm", "naive")->calls == 2);
  CHECK(find_row(rows, "agg_mm", "optimized")->calls == 1);
  int dA = 0, dB = 0;
  for (const OpRow& r : rows) {
    if (r.grad_of == "agg_mm.dA") dA += static_cast<int>(r.calls);
    if (r.grad_of == "agg_mm.dB") dB += static_cast<int>(r.calls);
    if (!r.grad_of.empty()) CHECK(r.phase == Phase::backward);
  }
  CHECK(dA == 1);
  CHECK(dB == 2);
}

TEST_CASE("aggregate_ops: an op's self time excludes ops nested behind a scope") {
  Session session;
  int32_t outer = open_plain("agg_composite");
  busy_wait_ns(20'000);
  {
    Scope s("agg_inner_scope");
    int32_t inner = open_plain("agg_leaf");
    busy_wait_ns(60'000);
    close_op(inner);
  }
  close_op(outer);
  const Profile& p = session.stop();
  const std::vector<OpRow> rows = aggregate_ops(p);
  REQUIRE(rows.size() == 2);
  const OpRow* composite = find_row(rows, "agg_composite");
  const OpRow* leaf = find_row(rows, "agg_leaf");
  REQUIRE(composite);
  REQUIRE(leaf);
  CHECK(composite->self_ns == composite->total_ns - leaf->total_ns);
  CHECK(leaf->self_ns >= 60'000);
  CHECK(total_op_self_ns(p) == composite->total_ns);
}

TEST_CASE("aggregate_ops of an empty profile is empty") {
  Profile empty;
  CHECK(aggregate_ops(empty).empty());
  CHECK(total_op_self_ns(empty) == 0);
}

}  // namespace
}  // namespace prism::profiler
