// The scope tree: per-module attribution, and the tree report.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "profiler/aggregate.h"
#include "profiler/memory.h"
#include "profiler/reports.h"
#include "profiler/session.h"
#include "profiler_test_util.h"

using namespace prism::profiler;
using prism::profiler::testing::busy_wait_ns;
using prism::profiler::testing::open_plain;

namespace {

void op(const char* name, Cost cost, int64_t ns) {
  int32_t h = open_plain(name, "naive", cost);
  busy_wait_ns(ns);
  close_op(h);
}

std::map<std::string, ScopeRow> by_path(const std::vector<ScopeRow>& rows) {
  std::map<std::string, ScopeRow> m;
  for (const ScopeRow& r : rows) m[r.path] = r;
  return m;
}

}  // namespace

TEST_CASE("tree: rows cover their subtree, backward counts for the forward's module") {
  Session session;
  int32_t fc1_scope = 0;
  {
    Scope model("model");
    {
      Scope fc1("fc1");
      fc1_scope = current_scope();
      op("matmul", Cost{100, 50, 10}, 20000);
    }
    {
      Scope fc2("fc2");
      op("matmul", Cost{40, 20, 10}, 20000);
    }
  }
  op("loose", Cost{1, 0, 1}, 20000);  // outside every scope
  {
    // What the autograd engine does: backward ops run in the forward op's scope.
    PhaseGuard bw(Phase::backward);
    ScopeRestore in_fc1(fc1_scope);
    op("matmul", Cost{200, 100, 20}, 20000);
  }
  const Profile& p = session.stop();
  const auto rows = aggregate_scopes(p);
  auto m = by_path(rows);
  REQUIRE(m.count("model.fc1"));
  REQUIRE(m.count("model.fc2"));
  REQUIRE(m.count("model"));
  REQUIRE(m.count(""));
  CHECK(m["model.fc1"].cost[0].flops == 100);
  CHECK(m["model.fc1"].cost[1].flops == 200);
  CHECK(m["model.fc2"].cost[0].flops == 40);
  CHECK(m["model"].cost[0].flops == 140);
  CHECK(m["model"].cost[1].flops == 200);
  CHECK(m["model"].calls == 1);
  CHECK(m["model.fc1"].calls == 1);
  CHECK(m["model.fc1"].depth == 2);
  CHECK(m[""].cost[0].flops == 1);
  // The top-level rows partition the op time.
  int64_t top = 0;
  for (const ScopeRow& r : rows) {
    if (r.depth <= 1) top += r.time_ns();
  }
  CHECK(top == total_op_self_ns(p));
  CHECK(m["model"].time_ns() == m["model.fc1"].time_ns() + m["model.fc2"].time_ns());
  // Tree order: a parent comes before its children.
  size_t i_model = 0, i_fc1 = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].path == "model") i_model = i;
    if (rows[i].path == "model.fc1") i_fc1 = i;
  }
  CHECK(i_model < i_fc1);
}

TEST_CASE("tree: the report indents children and shows module info") {
  Session session;
  {
    Scope model("model");
    Scope fc1("fc1");
    op("matmul", Cost{2000000, 1000000, 10}, 10000);
  }
  const Profile& p = session.stop();
  TreeOptions opts;
  opts.modules["model.fc1"] = ModuleInfo{"Linear", 1234};
  const std::string t = format_tree(p, opts);
  CHECK(t.find("model") != std::string::npos);
  CHECK(t.find("  fc1") != std::string::npos);
  CHECK(t.find("Linear") != std::string::npos);
  CHECK(t.find("1234") != std::string::npos);
  CHECK(t.find("MFLOP") != std::string::npos);
  opts.max_depth = 1;
  CHECK(format_tree(p, opts).find("fc1") == std::string::npos);
}

TEST_CASE("tree: a scope's noted output shape and forward allocations reach its row") {
  Session session;
  {
    Scope model("model");
    const int64_t dims[2] = {2, 3};
    int32_t h = open_plain("matmul");
    prism::profiler::note_alloc(0, MemRole::activation, 24);
    close_op(h);
    note_scope_output(dims, 2);
  }
  note_scope_output(nullptr, 0);  // outside any scope: ignored
  const auto rows = aggregate_scopes(session.stop());
  auto m = by_path(rows);
  REQUIRE(m.count("model"));
  CHECK(m["model"].output_shape == "[2,3]");
  CHECK(m["model"].alloc_bytes_by_phase[0] == 24);
  CHECK(m["model"].alloc_bytes_by_phase[1] == 0);
  prism::profiler::note_free(0, MemRole::activation, 24);
}
