// The Chrome trace: complete events nested like the records, counters, metadata; file output.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "profiler/memory.h"
#include "profiler/reports.h"
#include "profiler_test_util.h"

namespace prism::profiler {
namespace {

using nlohmann::json;
using testing::busy_wait_ns;
using testing::shapes_of;

const json* event_named(const json& trace, const std::string& name, const std::string& ph) {
  for (const json& e : trace["traceEvents"]) {
    if (e["name"] == name && e["ph"] == ph) return &e;
  }
  return nullptr;
}

// child within parent, as a trace viewer computes it.
bool nested(const json& child, const json& parent) {
  const double cts = child["ts"], cdur = child["dur"];
  const double pts = parent["ts"], pdur = parent["dur"];
  return cts >= pts && cts + cdur <= pts + pdur;
}

TEST_CASE("trace_json: ops and scopes are complete events nested like their records") {
  Session session;
  {
    Scope model("tr_model");
    int32_t outer =
        open_op("tr_outer", "naive", "cpu", Cost{12, 6, 80}, shapes_of({{2, 3}, {3, 4}}));
    busy_wait_ns(10'000);
    int32_t inner = open_op("tr_inner", "fused", "cpu", Cost{}, ShapeList{});
    note_alloc(0, MemRole::activation, 4000);
    busy_wait_ns(10'000);
    close_op(inner);
    close_op(outer);
    note_free(0, MemRole::activation, 4000);
  }
  const Profile& p = session.stop();
  const json trace = json::parse(trace_json(p));

  CHECK(trace["displayTimeUnit"] == "ns");
  CHECK(trace["otherData"]["threads"] == p.meta.threads);
  CHECK(trace["otherData"]["version"] == p.meta.version);

  const json* model = event_named(trace, "tr_model", "X");
  const json* outer = event_named(trace, "tr_outer", "X");
  const json* inner = event_named(trace, "tr_inner", "X");
  REQUIRE(model);
  REQUIRE(outer);
  REQUIRE(inner);
  CHECK(nested(*outer, *model));
  CHECK(nested(*inner, *outer));
  CHECK((*model)["cat"] == "scope,forward");
  CHECK((*outer)["cat"] == "op,forward");
  CHECK((*outer)["pid"] == 1);
  CHECK((*outer)["tid"] == p.recording.records[1].tid);

  // Times are microseconds from the start of the recording, with the ns kept as a fraction.
  const OpRecord& rec = p.recording.records[1];
  CHECK((*outer)["ts"].get<double>() ==
        doctest::Approx(static_cast<double>(rec.start_ns - p.recording.start_ns) / 1000.0));
  CHECK((*outer)["dur"].get<double>() ==
        doctest::Approx(static_cast<double>(rec.dur_ns) / 1000.0).epsilon(1e-9));
  CHECK((*inner)["dur"].get<double>() >= 10.0);

  const json& args = (*outer)["args"];
  CHECK(args["variant"] == "naive");
  CHECK(args["phase"] == "forward");
  CHECK(args["grad_of"] == "");
  CHECK(args["scope"] == "tr_model");
  CHECK(args["shapes"] == "[2,3] [3,4]");
  CHECK(args["flops"] == 12);
  CHECK(args["bytes"] == 80);
  CHECK(args["allocs"] == 1);
  CHECK(args["alloc_bytes"] == 4000);
  CHECK((*inner)["args"]["variant"] == "fused");

  // The allocation and the free each left a counter sample on the cpu track.
  int counters = 0;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] != "C") continue;
    CHECK(e["name"] == "live memory (cpu)");
    CHECK(e["args"].contains("bytes"));
    CHECK(e.contains("ts"));
    ++counters;
  }
  CHECK(counters == 2);
  CHECK(p.recording.memory.size() == 2);

  const json* process = event_named(trace, "process_name", "M");
  REQUIRE(process);
  CHECK((*process)["args"]["name"] == "prism");
  CHECK(event_named(trace, "thread_name", "M"));
}

TEST_CASE("trace_json: a child never ends after its parent, whatever the rounding") {
  // ns values for which plain ns / 1000.0 puts the child's end one ulp past the parent's
  // (found by search); the trace must clamp it back inside.
  const int64_t ps = 273878288, pd = 1978447, cs = 274817732, cd = 1039003;
  REQUIRE(cs + cd == ps + pd);
  REQUIRE(static_cast<double>(cs) / 1000.0 + static_cast<double>(cd) / 1000.0 >
          static_cast<double>(ps) / 1000.0 + static_cast<double>(pd) / 1000.0);

  Profile p;
  p.recording.start_ns = 0;
  p.recording.stop_ns = ps + pd;
  p.recording.scope_paths = {""};
  OpRecord parent;
  parent.op = "round_parent";
  parent.start_ns = ps;
  parent.dur_ns = pd;
  OpRecord child = parent;
  child.op = "round_child";
  child.parent = 0;
  child.depth = 1;
  child.start_ns = cs;
  child.dur_ns = cd;
  p.recording.records = {parent, child};

  const json trace = json::parse(trace_json(p));
  const json* pe = event_named(trace, "round_parent", "X");
  const json* ce = event_named(trace, "round_child", "X");
  REQUIRE(pe);
  REQUIRE(ce);
  CHECK(nested(*ce, *pe));
  CHECK((*ce)["dur"].get<double>() == doctest::Approx(cd / 1000.0));
}

TEST_CASE("trace_json of an empty profile is a valid trace") {
  Profile p;
  const json trace = json::parse(trace_json(p));
  REQUIRE(trace["traceEvents"].is_array());
  for (const json& e : trace["traceEvents"]) CHECK(e["ph"] == "M");
}

TEST_CASE("write_text_file writes the text, and names the path when it cannot") {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "prism_write_text_file_test.json";
  write_text_file(path.string(), "{\"a\": 1}\n");
  std::ifstream in(path);
  const std::string back((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(back == "{\"a\": 1}\n");
  std::filesystem::remove(path);

  const std::string bad = "/nonexistent-dir/x.json";
  CHECK_THROWS_AS(write_text_file(bad, "x"), std::runtime_error);
  try {
    write_text_file(bad, "x");
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    CHECK(msg.find("cannot write /nonexistent-dir/x.json") != std::string::npos);
    CHECK(msg.find("No such file") != std::string::npos);
  }
}

}  // namespace
}  // namespace prism::profiler
