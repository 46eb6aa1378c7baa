// Collective spans (profiler/collective.h) and the communication phase: what a session keeps,
// the bus-bandwidth factors, and the table, JSON and trace that show them.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "profiler/collective.h"
#include "profiler/reports.h"
#include "profiler_test_util.h"

namespace prism::profiler {
namespace {

using nlohmann::json;
using testing::busy_wait_ns;
using testing::open_plain;

TEST_CASE("bus_bandwidth_factor: the nccl-tests factors, exactly") {
  CHECK(bus_bandwidth_factor("allreduce", 4) == 1.5);  // 2 (n - 1) / n
  CHECK(bus_bandwidth_factor("allreduce", 2) == 1.0);
  CHECK(bus_bandwidth_factor("allreduce", 8) == 1.75);
  CHECK(bus_bandwidth_factor("allreduce", 1) == 0.0);   // one rank moves nothing
  CHECK(bus_bandwidth_factor("allgather", 4) == 0.75);  // (n - 1) / n
  CHECK(bus_bandwidth_factor("reducescatter", 8) == 0.875);
  CHECK(bus_bandwidth_factor("alltoall", 2) == 0.5);
  CHECK(bus_bandwidth_factor("broadcast", 4) == 1.0);
  CHECK(bus_bandwidth_factor("reduce", 16) == 1.0);
  CHECK(bus_bandwidth_factor("sendrecv", 2) == 1.0);
  CHECK_THROWS_AS(bus_bandwidth_factor("allreduce", 0), std::invalid_argument);
}

TEST_CASE("record_collective: refuses impossible spans with a message naming the call") {
  CHECK_THROWS_WITH_AS(record_collective("allreduce", 10, 5, 8, 2),
                       doctest::Contains("end_ns 5 is before start_ns 10"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(record_collective("allreduce", 0, 5, -1, 2), doctest::Contains("bytes -1"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(record_collective("allgather", 0, 5, 8, 0),
                       doctest::Contains("record_collective(\"allgather\"): world_size 0 < 1"),
                       std::invalid_argument);
  CHECK_THROWS_AS(record_collective("", 0, 5, 8, 2), std::invalid_argument);
}

// Two allreduces (1 us and 3 us, 4000 bytes each) and one allgather among 4 ranks, recorded
// inside a session at times it surely covers.
Profile record_three() {
  Session session;
  const int64_t t0 = now_ns();
  busy_wait_ns(20'000);
  record_collective("allreduce", t0, t0 + 1000, 4000, 4);
  record_collective("allgather", t0 + 500, t0 + 2500, 6000, 4);
  record_collective("allreduce", t0 + 2000, t0 + 5000, 4000, 4);
  return session.stop();
}

TEST_CASE("record_collective: a session keeps the spans, and the rows add them up exactly") {
  const Profile p = record_three();
  REQUIRE(p.recording.collectives.size() == 3);
  CHECK(std::string(p.recording.collectives[0].op) == "allreduce");
  CHECK(p.recording.collectives[0].end_ns - p.recording.collectives[0].start_ns == 1000);
  CHECK(p.recording.collectives[1].world_size == 4);

  const std::vector<CollectiveRow> rows = aggregate_collectives(p);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].op == "allreduce");  // first seen first
  CHECK(rows[0].calls == 2);
  CHECK(rows[0].bytes == 8000);
  CHECK(rows[0].total_ns == 4000);
  CHECK(rows[0].median_ns == 2000);  // (1000 + 3000) / 2
  CHECK(rows[0].algbw_gbs == 2.0);   // 8000 B / 4000 ns
  CHECK(rows[0].busbw_gbs == 3.0);   // * 2 (4 - 1) / 4
  CHECK(rows[1].op == "allgather");
  CHECK(rows[1].calls == 1);
  CHECK(rows[1].median_ns == 2000);
  CHECK(rows[1].algbw_gbs == 3.0);   // 6000 B / 2000 ns
  CHECK(rows[1].busbw_gbs == 2.25);  // * (4 - 1) / 4
}

TEST_CASE("record_collective: nothing is kept outside a session") {
  const int64_t t = now_ns();
  record_collective("allreduce", t, t + 10, 100, 2);  // no session: a no-op
  Session session;
  busy_wait_ns(5'000);
  const Profile& p = session.stop();
  CHECK(p.recording.collectives.empty());
  record_collective("allreduce", t, now_ns(), 100, 2);  // after the stop: not in this profile
  CHECK(p.recording.collectives.empty());
  CHECK(aggregate_collectives(p).empty());
  CHECK(format_collectives(p).empty());
  CHECK(format_table(p).find("collectives") == std::string::npos);
}

TEST_CASE("record_collective: a span begun before the session starts is cut at its start") {
  const int64_t before = now_ns();
  busy_wait_ns(5'000);
  Session session;
  busy_wait_ns(5'000);
  const int64_t end = now_ns();
  record_collective("broadcast", before, end, 64, 2);
  const Profile& p = session.stop();
  REQUIRE(p.recording.collectives.size() == 1);
  CHECK(p.recording.collectives[0].start_ns == p.recording.start_ns);
  CHECK(p.recording.collectives[0].end_ns == end);
}

TEST_CASE("record_collective: spans from another thread carry that thread's number") {
  Session session;
  const int64_t t0 = now_ns();
  busy_wait_ns(5'000);
  record_collective("allreduce", t0, t0 + 100, 8, 2);
  std::thread([&] { record_collective("allreduce", t0, t0 + 300, 8, 2); }).join();
  const Profile& p = session.stop();
  REQUIRE(p.recording.collectives.size() == 2);
  CHECK(p.recording.collectives[0].tid != p.recording.collectives[1].tid);
  const std::vector<CollectiveRow> rows = aggregate_collectives(p);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].calls == 2);
  CHECK(rows[0].total_ns == 400);
}

TEST_CASE("format_table: a collectives table under the op table") {
  const Profile p = record_three();
  const std::string table = format_table(p);
  const std::string part = format_collectives(p);
  REQUIRE_FALSE(part.empty());
  CHECK(table.find(part) != std::string::npos);
  CHECK(part.find("algbw GB/s") != std::string::npos);
  CHECK(part.find("busbw GB/s") != std::string::npos);
  // allreduce: 4 ranks, 2 calls, 4 kB a call, 4 us in flight, median 2 us, 2.00 and 3.00 GB/s.
  CHECK(part.find("allreduce") != std::string::npos);
  CHECK(part.find("4.000") != std::string::npos);
  CHECK(part.find("2.000") != std::string::npos);
  CHECK(part.find("3.00") != std::string::npos);
  CHECK(part.find("2.25") != std::string::npos);
}

TEST_CASE("profile_json: a collectives array with every figure") {
  const json doc = json::parse(profile_json(record_three()));
  REQUIRE(doc.contains("collectives"));
  const json& c = doc["collectives"];
  REQUIRE(c.size() == 2);
  CHECK(c[0]["op"] == "allreduce");
  CHECK(c[0]["world_size"] == 4);
  CHECK(c[0]["calls"] == 2);
  CHECK(c[0]["bytes"] == 8000);
  CHECK(c[0]["time_ns"] == 4000);
  CHECK(c[0]["median_ns"] == 2000);
  CHECK(c[0]["algbw_gbs"] == 2.0);
  CHECK(c[0]["busbw_gbs"] == 3.0);
  CHECK(c[1]["op"] == "allgather");

  Session empty;
  CHECK(json::parse(profile_json(empty.stop()))["collectives"] == json::array());
}

TEST_CASE("trace_json: collectives are complete events on a communication track") {
  const Profile p = record_three();
  const json trace = json::parse(trace_json(p));
  int64_t track = -1;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"] == "communication") {
      track = e["tid"];
    }
  }
  REQUIRE(track >= 0);
  std::vector<json> spans;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == "X" && e["tid"] == track) spans.push_back(e);
  }
  REQUIRE(spans.size() == 3);
  // No host thread shares the track.
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == "X" && e["cat"] != "comm") CHECK(e["tid"] != track);
  }
  CHECK(spans[0]["name"] == "allreduce");
  CHECK(spans[0]["cat"] == "comm");
  CHECK(spans[0]["dur"] == 1.0);  // us
  CHECK(spans[0]["args"]["bytes"] == 4000);
  CHECK(spans[0]["args"]["algbw_gbs"] == 4.0);
  CHECK(spans[0]["args"]["busbw_gbs"] == 6.0);
  const double t0 = spans[0]["ts"];
  CHECK(static_cast<double>(spans[2]["ts"]) - t0 == doctest::Approx(2.0));
}

TEST_CASE("communication phase: ops under it are their own rows, module column and JSON field") {
  Session session;
  {
    Scope model("cm_model");
    close_op(open_plain("cm_matmul", "naive", Cost{100, 50, 10}));
    PhaseGuard comm(Phase::communication);
    const int32_t pack = open_plain("cm_pack", "-", Cost{0, 0, 64});
    busy_wait_ns(20'000);
    close_op(pack);
  }
  const Profile& p = session.stop();
  CHECK(std::string(phase_name(Phase::communication)) == "communication");

  bool found = false;
  for (const OpRow& r : aggregate_ops(p)) {
    if (r.name == "cm_pack") {
      found = true;
      CHECK(r.phase == Phase::communication);
    }
  }
  CHECK(found);
  for (const ScopeRow& r : aggregate_scopes(p)) {
    if (r.path != "cm_model") continue;
    CHECK(r.self_ns[4] >= 20'000);
    CHECK(r.time_ns() == r.self_ns[0] + r.self_ns[4]);
  }
  CHECK(format_table(p).find("communication") != std::string::npos);
  CHECK(format_tree(p).find("comm ") != std::string::npos);
  const json doc = json::parse(profile_json(p));
  bool module = false;
  for (const json& m : doc["modules"]) {
    if (m["path"] == "cm_model") {
      module = true;
      CHECK(m["comm_ns"].get<int64_t>() >= 20'000);
    }
  }
  CHECK(module);
  CHECK(trace_json(p).find("op,communication") != std::string::npos);
}

TEST_CASE("allreduce_cost: the ring's additions per rank and the message's bytes, exactly") {
  // 269,322 float32 gradients (the MLP) among 2 ranks: half of them added on each rank.
  const Cost two = allreduce_cost(269322, 2, 4);
  CHECK(two.flops == 134661);
  CHECK(two.macs == 0);
  CHECK(two.bytes == 1077288);
  // 4 ranks: 3/4 of the elements, rounded down; one rank adds nothing.
  CHECK(allreduce_cost(1000, 4, 4).flops == 750);
  CHECK(allreduce_cost(7, 3, 8).flops == 4);
  CHECK(allreduce_cost(7, 3, 8).bytes == 56);
  CHECK(allreduce_cost(1000, 1, 4).flops == 0);
  CHECK(allreduce_cost(0, 2, 4) == Cost{});
  CHECK_THROWS_AS(allreduce_cost(10, 0, 4), std::invalid_argument);
}

}  // namespace
}  // namespace prism::profiler
