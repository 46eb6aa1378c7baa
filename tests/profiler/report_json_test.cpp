// The JSON dump: meta, one object per aggregated row with raw numbers, memory, totals.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profiler/aggregate.h"
#include "profiler/memory.h"
#include "profiler/reports.h"
#include "profiler_test_util.h"

namespace prism::profiler {
namespace {

using nlohmann::json;
using testing::busy_wait_ns;
using testing::open_plain;

const json* op_named(const json& doc, const std::string& name, const std::string& phase) {
  for (const json& r : doc["ops"]) {
    if (r["name"] == name && r["phase"] == phase) return &r;
  }
  return nullptr;
}

TEST_CASE("profile_json holds meta, rows matching the records, memory and totals") {
  const int64_t live_before = memory_stats(0).live_bytes;
  const int64_t activations_before =
      memory_stats(0).live_by_role[static_cast<size_t>(MemRole::activation)];
  Session session;
  for (int i = 0; i < 2; ++i) {
    int32_t h = open_plain("js_linear", "optimized", Cost{600, 300, 1200});
    note_alloc(0, MemRole::activation, 5000);
    busy_wait_ns(20'000);
    close_op(h);
  }
  {
    PhaseGuard backward(Phase::backward);
    GradOfGuard g("js_linear.dW");
    close_op(open_plain("js_linear", "naive", Cost{400, 200, 0}));
  }
  note_free(0, MemRole::activation, 5000);
  note_free(0, MemRole::activation, 5000);
  const Profile& p = session.stop();
  const json doc = json::parse(profile_json(p));

  const json& meta = doc["meta"];
  CHECK(meta["threads"] == p.meta.threads);
  CHECK(meta["version"] == p.meta.version);
  CHECK(meta["compiler"] == p.meta.compiler);
  CHECK(meta["flags"] == p.meta.flags);
  CHECK(meta["build_type"] == p.meta.build_type);
  CHECK(meta["clock"] == p.meta.clock);
  CHECK(meta["clock_resolution_ns"].get<double>() == p.meta.clock_resolution_ns);
  CHECK(meta["overhead_ns_per_op"].get<double>() == p.meta.overhead_ns_per_op);
  CHECK(meta["wall_ns"] == p.wall_ns());

  REQUIRE(doc["ops"].size() == 2);
  const json* fwd = op_named(doc, "js_linear", "forward");
  const json* bwd = op_named(doc, "js_linear", "backward");
  REQUIRE(fwd);
  REQUIRE(bwd);
  int64_t fwd_ns = 0;
  for (const OpRecord& r : p.recording.records) {
    if (r.phase == Phase::forward) fwd_ns += r.dur_ns;
  }
  CHECK((*fwd)["variant"] == "optimized");
  CHECK((*fwd)["grad_of"] == "");
  CHECK((*fwd)["device"] == "cpu");
  CHECK((*fwd)["calls"] == 2);
  CHECK((*fwd)["time_ns"] == fwd_ns);
  CHECK((*fwd)["self_ns"] == fwd_ns);
  CHECK((*fwd)["time_ns"].get<int64_t>() >= 40'000);
  CHECK((*fwd)["flops"] == 1200);
  CHECK((*fwd)["macs"] == 600);
  CHECK((*fwd)["bytes"] == 2400);
  CHECK((*fwd)["allocs"] == 2);
  CHECK((*fwd)["alloc_bytes"] == 10000);
  CHECK((*bwd)["variant"] == "naive");
  CHECK((*bwd)["grad_of"] == "js_linear.dW");
  CHECK((*bwd)["calls"] == 1);
  CHECK((*bwd)["allocs"] == 0);

  CHECK(doc["memory"]["samples"] == 4);
  // The timeline: the four samples in time order, live bytes after each alloc and free, times
  // from the recording's start.
  const json& timeline = doc["memory"]["timeline"];
  REQUIRE(timeline.size() == 4);
  const int64_t expect_live[] = {5000, 10000, 5000, 0};
  for (size_t i = 0; i < 4; ++i) {
    CHECK(timeline[i]["device"] == "cpu");
    CHECK(timeline[i]["live_bytes"] == live_before + expect_live[i]);
    // Every buffer here is an activation, so that role follows the total; the first two were
    // allocated inside js_linear, the frees outside every op.
    // (A role at 0 bytes is left out of the point.)
    CHECK(timeline[i]["roles"].value("activation", int64_t{0}) ==
          activations_before + expect_live[i]);
    CHECK(timeline[i]["op"] == (i < 2 ? "js_linear" : ""));
    CHECK(timeline[i]["t_ns"].get<int64_t>() >= 0);
    CHECK(timeline[i]["t_ns"].get<int64_t>() <= p.wall_ns());
    if (i > 0) CHECK(timeline[i]["t_ns"] >= timeline[i - 1]["t_ns"]);
  }
  CHECK(doc["memory"]["peak_live_bytes"]["cpu"] == live_before + 10000);
  CHECK(doc["memory"]["peak_live_bytes"]["cuda"] == 0);

  CHECK(doc["totals"]["flops"] == 1600);
  CHECK(doc["totals"]["bytes"] == 2400);
  CHECK(doc["totals"]["op_self_ns"] == total_op_self_ns(p));
}

TEST_CASE("profile_json of an empty profile has empty ops and zero totals") {
  Profile p;
  const json doc = json::parse(profile_json(p));
  CHECK(doc["ops"].is_array());
  CHECK(doc["ops"].empty());
  CHECK(doc["totals"]["flops"] == 0);
  CHECK(doc["memory"]["samples"] == 0);
  CHECK(doc["memory"]["timeline"].empty());
  CHECK(doc["meta"].contains("threads"));
}

TEST_CASE("profile_json thins a long memory timeline to 8192 points and keeps the peak") {
  const int64_t live_before = memory_stats(0).live_bytes;
  Session session;
  for (int i = 0; i < 10000; ++i) note_alloc(0, MemRole::temporary, 16);  // rises to 160000
  for (int i = 0; i < 10000; ++i) note_free(0, MemRole::temporary, 16);
  const json doc = json::parse(profile_json(session.stop()));
  const json& timeline = doc["memory"]["timeline"];
  CHECK(doc["memory"]["samples"] == 20000);
  CHECK(timeline.size() == 8192);
  int64_t top = 0;
  for (const json& t : timeline) top = std::max(top, t["live_bytes"].get<int64_t>());
  CHECK(top == live_before + 160000);
  CHECK(doc["memory"]["peak_live_bytes"]["cpu"] == top);
}

TEST_CASE("profile_json lists the module tree: one entry per scope, each covering its subtree") {
  Session session;
  int32_t fc1_scope = 0;
  {
    Scope model("model");
    {
      Scope fc1("fc1");
      fc1_scope = current_scope();
      close_op(open_plain("js_mm", "naive", Cost{100, 50, 10}));
    }
    {
      Scope fc2("fc2");
      close_op(open_plain("js_mm", "naive", Cost{40, 20, 10}));
    }
  }
  close_op(open_plain("js_loose", "naive", Cost{1, 0, 1}));
  {
    // Backward runs in the forward op's scope, as the autograd engine does it.
    PhaseGuard bw(Phase::backward);
    ScopeRestore in_fc1(fc1_scope);
    close_op(open_plain("js_mm", "naive", Cost{200, 100, 20}));
  }
  const Profile& p = session.stop();
  const json doc = json::parse(profile_json(p));
  const json& mods = doc["modules"];
  const std::vector<ScopeRow> rows = aggregate_scopes(p);
  REQUIRE(mods.size() == 4);
  REQUIRE(rows.size() == 4);
  // Same rows, same order as the text tree: parents first.
  const char* paths[] = {"", "model", "model.fc1", "model.fc2"};
  const int depths[] = {0, 1, 2, 2};
  for (size_t i = 0; i < 4; ++i) {
    const json& m = mods[i];
    CHECK(m["path"] == paths[i]);
    CHECK(m["path"] == rows[i].path);
    CHECK(m["name"] == rows[i].name);
    CHECK(m["depth"] == depths[i]);
    CHECK(m["fwd_ns"] == rows[i].self_ns[0]);
    CHECK(m["bwd_ns"] == rows[i].self_ns[1]);
    CHECK(m["opt_ns"] == 0);
  }
  CHECK(mods[0]["name"] == "(outside scopes)");
  CHECK(mods[0]["calls"] == 0);
  CHECK(mods[1]["calls"] == 1);
  CHECK(mods[2]["calls"] == 1);
  CHECK(mods[2]["name"] == "fc1");
  CHECK(mods[1]["fwd_flops"] == 140);
  CHECK(mods[1]["bwd_flops"] == 200);
  CHECK(mods[2]["fwd_flops"] == 100);
  CHECK(mods[2]["bwd_flops"] == 200);
  CHECK(mods[3]["fwd_flops"] == 40);
  CHECK(mods[3]["bwd_flops"] == 0);
  CHECK(mods[0]["fwd_flops"] == 1);
  // A row covers its children; the roots partition the op time.
  CHECK(mods[1]["fwd_ns"] == mods[2]["fwd_ns"].get<int64_t>() + mods[3]["fwd_ns"].get<int64_t>());
  CHECK(mods[1]["bwd_ns"] == mods[2]["bwd_ns"]);
  int64_t roots = 0;
  for (const json& m : mods) {
    if (m["depth"].get<int>() <= 1) {
      roots += m["fwd_ns"].get<int64_t>() + m["bwd_ns"].get<int64_t>();
    }
  }
  CHECK(roots == doc["totals"]["op_self_ns"]);
}

TEST_CASE("profile_json of a profile with no scopes has an empty module list") {
  Profile p;
  const json doc = json::parse(profile_json(p));
  CHECK(doc["modules"].is_array());
  CHECK(doc["modules"].empty());
}

}  // namespace
}  // namespace prism::profiler
