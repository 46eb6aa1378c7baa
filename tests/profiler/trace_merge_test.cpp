// merge_rank_traces (profiler/reports.h): per-rank Chrome traces as one, a process per rank.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profiler/clock.h"
#include "profiler/reports.h"

namespace prism::profiler {
namespace {

using nlohmann::json;

// What trace_json writes, in small: an op on thread 0, a span on the communication track,
// metadata naming the process and both threads.
std::string fake_rank(double op_ts, const std::string& tag) {
  json doc{{"traceEvents",
            {{{"name", "matmul"}, {"ph", "X"}, {"ts", op_ts}, {"dur", 2.0}, {"pid", 1}, {"tid", 0}},
             {{"name", "allreduce"},
              {"ph", "X"},
              {"ts", op_ts + 1.0},
              {"dur", 4.0},
              {"pid", 1},
              {"tid", 1000001}},
             {{"name", "process_name"},
              {"ph", "M"},
              {"pid", 1},
              {"tid", 0},
              {"args", {{"name", "prism"}}}},
             {{"name", "thread_name"},
              {"ph", "M"},
              {"pid", 1},
              {"tid", 0},
              {"args", {{"name", "thread 0"}}}},
             {{"name", "thread_name"},
              {"ph", "M"},
              {"pid", 1},
              {"tid", 1000001},
              {"args", {{"name", "communication"}}}}}},
           {"displayTimeUnit", "ns"},
           {"otherData", {{"tag", tag}}}};
  return doc.dump();
}

const json* find(const json& trace, int pid, const std::string& name, const std::string& ph) {
  for (const json& e : trace["traceEvents"]) {
    if (e["pid"] == pid && e["name"] == name && e["ph"] == ph) return &e;
  }
  return nullptr;
}

TEST_CASE("merge_rank_traces: one process per rank, times shifted by each rank's offset") {
  const json merged =
      json::parse(merge_rank_traces({fake_rank(1.5, "r0"), fake_rank(10.25, "r1")}, {0, 2500}));
  REQUIRE(merged["traceEvents"].size() == 12);  // 5 events and a sort index per rank
  CHECK(merged["displayTimeUnit"] == "ns");
  for (int r = 0; r < 2; ++r) {
    const json* name = find(merged, r, "process_name", "M");
    REQUIRE(name != nullptr);
    CHECK((*name)["args"]["name"] == "rank " + std::to_string(r));
    const json* sort = find(merged, r, "process_sort_index", "M");
    REQUIRE(sort != nullptr);
    CHECK((*sort)["args"]["sort_index"] == r);
    // Thread names kept, on the same tids.
    int threads = 0;
    for (const json& e : merged["traceEvents"]) {
      if (e["pid"] == r && e["name"] == "thread_name") {
        ++threads;
        CHECK(e["args"]["name"] == (e["tid"] == 0 ? "thread 0" : "communication"));
      }
    }
    CHECK(threads == 2);
  }
  CHECK((*find(merged, 0, "matmul", "X"))["ts"] == 1.5);
  CHECK((*find(merged, 0, "allreduce", "X"))["ts"] == 2.5);
  CHECK((*find(merged, 1, "matmul", "X"))["ts"] == 12.75);  // 10.25 us + 2500 ns
  CHECK((*find(merged, 1, "allreduce", "X"))["ts"] == 13.75);
  CHECK((*find(merged, 1, "allreduce", "X"))["dur"] == 4.0);  // durations untouched
  CHECK((*find(merged, 1, "allreduce", "X"))["tid"] == 1000001);
  for (const json& e : merged["traceEvents"]) CHECK(e["pid"].is_number_integer());
  REQUIRE(merged["otherData"]["ranks"].size() == 2);
  CHECK(merged["otherData"]["ranks"][1]["tag"] == "r1");
}

TEST_CASE("merge_rank_traces: a negative offset moves a rank earlier, a trace without names") {
  json bare{{"traceEvents", {{{"name", "op"}, {"ph", "X"}, {"ts", 5.0}, {"dur", 1.0}}}}};
  const json merged = json::parse(merge_rank_traces({bare.dump()}, {-1000}));
  CHECK((*find(merged, 0, "op", "X"))["ts"] == 4.0);
  const json* name = find(merged, 0, "process_name", "M");
  REQUIRE(name != nullptr);
  CHECK((*name)["args"]["name"] == "rank 0");
}

TEST_CASE("merge_rank_traces: refuses what is not a trace, naming the rank") {
  CHECK_THROWS_WITH_AS(merge_rank_traces({fake_rank(0, "a")}, {0, 1}),
                       doctest::Contains("1 traces but 2 clock offsets"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(merge_rank_traces({fake_rank(0, "a"), "{not json"}, {0, 0}),
                       doctest::Contains("the trace of rank 1"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(merge_rank_traces({"{\"events\": []}"}, {0}),
                       doctest::Contains("rank 0 is not a Chrome trace"), std::invalid_argument);
  CHECK(json::parse(merge_rank_traces({}, {}))["traceEvents"].empty());
}

TEST_CASE("merge_rank_traces: a real profile's trace merges with its communication track") {
  Session session;
  const int64_t t0 = now_ns();
  while (now_ns() - t0 < 5000) {
  }
  record_collective("allreduce", t0, t0 + 1000, 1024, 2);
  const std::string one = trace_json(session.stop());
  const json merged = json::parse(merge_rank_traces({one, one}, {0, 1000}));
  const json* a = find(merged, 0, "allreduce", "X");
  const json* b = find(merged, 1, "allreduce", "X");
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  CHECK(static_cast<double>((*b)["ts"]) - static_cast<double>((*a)["ts"]) == doctest::Approx(1.0));
  CHECK((*find(merged, 1, "process_name", "M"))["args"]["name"] == "rank 1");
}

}  // namespace
}  // namespace prism::profiler
