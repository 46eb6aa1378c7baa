// GPU time in profiles, with a fake GPU timer: the profiler resolves event slots when the session
// stops, aligns them at the first GPU op, and shows them in the table, the JSON and the trace.
// (The real timer is CUDA events, kernels/cuda/runtime.cpp; this checks everything around it.)
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "profiler/aggregate.h"
#include "profiler/reports.h"
#include "profiler/session.h"
#include "profiler_test_util.h"

namespace prism::profiler {
namespace {

using testing::records_named;

// The fake device ran slot s from 1000 * s ns to 1000 * s + 250 (s + 1) ns after the reference.
int g_resets = 0;
void fake_reset() {
  ++g_resets;
}
bool fake_read(int32_t slot, int64_t* start_ns, int64_t* dur_ns) {
  if (slot > 5) return false;  // a slot whose events failed: no GPU time, no crash
  *start_ns = 1000 * slot;
  *dur_ns = 250 * (slot + 1);
  return true;
}
const GpuTimerHooks kFake{&fake_reset, &fake_read};

struct FakeGpu {
  FakeGpu() { set_gpu_timer_hooks(&kFake); }
  ~FakeGpu() { set_gpu_timer_hooks(nullptr); }
};

int32_t open_plain_cpu() {
  return open_op("cpu_op", "naive", "cpu", Cost{}, ShapeList{});
}

int32_t open_gpu_op(const char* op, int32_t slot) {
  const int32_t h = open_op(op, "tiled", "cuda", Cost{1000, 500, 64}, ShapeList{});
  attach_gpu_slot(h, slot);
  return h;
}

TEST_CASE("gpu time: slots resolve at stop, aligned at the first GPU op") {
  FakeGpu fake;
  g_resets = 0;
  Session session;
  CHECK(g_resets == 1);  // a session resets the timer when it starts
  close_op(open_plain_cpu());
  for (int32_t slot = 0; slot < 3; ++slot) close_op(open_gpu_op("gpu_matmul", slot));
  close_op(open_gpu_op("gpu_broken", 7));  // unreadable slot
  const Profile& p = session.stop();

  const auto gpu = records_named(p.recording, "gpu_matmul");
  REQUIRE(gpu.size() == 3);
  const int64_t origin = gpu[0]->start_ns;
  for (int32_t s = 0; s < 3; ++s) {
    CHECK(gpu[static_cast<size_t>(s)]->gpu_ns == 250 * (s + 1));
    CHECK(gpu[static_cast<size_t>(s)]->gpu_start_ns == origin + 1000 * s);
    CHECK(gpu[static_cast<size_t>(s)]->gpu_slot == -1);
  }
  const auto broken = records_named(p.recording, "gpu_broken");
  REQUIRE(broken.size() == 1);
  CHECK(broken[0]->gpu_ns == -1);
  const auto cpu = records_named(p.recording, "cpu_op");
  REQUIRE(cpu.size() == 1);
  CHECK(cpu[0]->gpu_ns == -1);
}

TEST_CASE("gpu time: the table adds a gpu column and GPU rates use it") {
  FakeGpu fake;
  Session session;
  for (int32_t slot = 0; slot < 2; ++slot) close_op(open_gpu_op("gpu_matmul", slot));
  const Profile& p = session.stop();

  bool found = false;
  for (const OpRow& r : aggregate_ops(p)) {
    if (r.name != "gpu_matmul") continue;
    found = true;
    CHECK(r.gpu_ns == 250 + 500);
  }
  CHECK(found);
  const std::string table = format_table(p);
  CHECK(table.find("gpu ") != std::string::npos);
  // 2 calls x 1000 FLOP over 750 ns of GPU time = 2.67 GFLOP/s (host time would say otherwise).
  CHECK(table.find("2.67") != std::string::npos);
}

TEST_CASE("gpu time: the trace draws GPU work on its own track") {
  FakeGpu fake;
  Session session;
  close_op(open_gpu_op("gpu_matmul", 0));
  close_op(open_gpu_op("gpu_matmul", 1));
  const Profile& p = session.stop();
  const auto doc = nlohmann::json::parse(trace_json(p));
  int gpu_spans = 0;
  bool named = false;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "X" && e["cat"].get<std::string>().rfind("gpu,", 0) == 0) {
      ++gpu_spans;
      CHECK(e["name"] == "gpu_matmul");
    }
    if (e["ph"] == "M" && e["name"] == "thread_name" &&
        e["args"]["name"].get<std::string>().find("GPU") != std::string::npos) {
      named = true;
    }
  }
  CHECK(gpu_spans == 2);
  CHECK(named);
}

TEST_CASE("gpu time: without hooks, slots are ignored and nothing breaks") {
  set_gpu_timer_hooks(nullptr);
  Session session;
  close_op(open_gpu_op("gpu_matmul", 0));
  const Profile& p = session.stop();
  const auto gpu = records_named(p.recording, "gpu_matmul");
  REQUIRE(gpu.size() == 1);
  CHECK(gpu[0]->gpu_ns == -1);
  CHECK(format_table(p).find("gpu ") == std::string::npos);
}

}  // namespace
}  // namespace prism::profiler
