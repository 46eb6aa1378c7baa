// The memory tracker's counters, and how allocations are attributed to the op that made them.
//
// The counters are process-wide, so every check here compares against a snapshot taken at the
// start of the test and frees what it allocates.
#include <doctest/doctest.h>

#include <string>

#include "profiler/memory.h"
#include "profiler/session.h"
#include "profiler_test_util.h"

namespace prism::profiler {
namespace {

using testing::open_plain;

int64_t role_live(const MemoryStats& s, MemRole r) {
  return s.live_by_role[static_cast<size_t>(r)];
}

TEST_CASE("note_alloc and note_free keep live bytes, counts and roles") {
  const MemoryStats before = memory_stats(0);
  const MemoryStats cuda_before = memory_stats(1);

  note_alloc(0, MemRole::parameter, 4096);
  note_alloc(0, MemRole::gradient, 1000);
  MemoryStats mid = memory_stats(0);
  CHECK(mid.live_bytes == before.live_bytes + 5096);
  CHECK(mid.peak_bytes >= mid.live_bytes);
  CHECK(mid.alloc_count == before.alloc_count + 2);
  CHECK(mid.alloc_bytes == before.alloc_bytes + 5096);
  CHECK(role_live(mid, MemRole::parameter) == role_live(before, MemRole::parameter) + 4096);
  CHECK(role_live(mid, MemRole::gradient) == role_live(before, MemRole::gradient) + 1000);
  CHECK(role_live(mid, MemRole::activation) == role_live(before, MemRole::activation));

  note_free(0, MemRole::parameter, 4096);
  note_free(0, MemRole::gradient, 1000);
  MemoryStats after = memory_stats(0);
  CHECK(after.live_bytes == before.live_bytes);
  CHECK(after.free_count == before.free_count + 2);
  CHECK(after.alloc_bytes == before.alloc_bytes + 5096);  // a running total, never decreases
  CHECK(role_live(after, MemRole::parameter) == role_live(before, MemRole::parameter));

  // Device 1 (cuda) has its own counters.
  CHECK(memory_stats(1).live_bytes == cuda_before.live_bytes);
  note_alloc(1, MemRole::activation, 512);
  CHECK(memory_stats(1).live_bytes == cuda_before.live_bytes + 512);
  CHECK(memory_stats(0).live_bytes == before.live_bytes);
  note_free(1, MemRole::activation, 512);
  CHECK(memory_stats(1).live_bytes == cuda_before.live_bytes);
}

TEST_CASE("the peak survives frees until reset_peak") {
  reset_peak(0);
  const MemoryStats start = memory_stats(0);
  CHECK(start.peak_bytes == start.live_bytes);

  note_alloc(0, MemRole::temporary, 1 << 20);
  note_free(0, MemRole::temporary, 1 << 20);
  MemoryStats s = memory_stats(0);
  CHECK(s.live_bytes == start.live_bytes);
  CHECK(s.peak_bytes == start.live_bytes + (1 << 20));

  reset_peak(0);
  s = memory_stats(0);
  CHECK(s.peak_bytes == s.live_bytes);
  note_alloc(0, MemRole::temporary, 100);
  CHECK(memory_stats(0).peak_bytes == start.live_bytes + 100);
  note_free(0, MemRole::temporary, 100);
}

TEST_CASE("role names") {
  CHECK(std::string(role_name(MemRole::activation)) == "activation");
  CHECK(std::string(role_name(MemRole::optimizer)) == "optimizer");
  CHECK(std::string(role_name(MemRole::data)) == "data");
}

TEST_CASE("an op record counts the allocations made while it was open, nested ones included") {
  Session session;
  int32_t outer = open_plain("alloc_outer");
  note_alloc(0, MemRole::activation, 1000);
  int32_t inner = open_plain("alloc_inner");
  note_alloc(0, MemRole::temporary, 24);
  note_free(0, MemRole::temporary, 24);  // frees are not allocations
  close_op(inner);
  close_op(outer);
  close_op(open_plain("alloc_none"));
  note_free(0, MemRole::activation, 1000);
  const Profile& p = session.stop();

  REQUIRE(p.recording.records.size() == 3);
  const OpRecord& o = p.recording.records[0];
  const OpRecord& i = p.recording.records[1];
  CHECK(o.allocs == 2);
  CHECK(o.alloc_bytes == 1024);
  CHECK(i.allocs == 1);
  CHECK(i.alloc_bytes == 24);
  CHECK(p.recording.records[2].allocs == 0);
  CHECK(p.recording.records[2].alloc_bytes == 0);

  // Every alloc and free while recording leaves a sample of the live bytes.
  REQUIRE(p.recording.memory.size() == 4);
  CHECK(p.recording.memory[1].live_bytes - p.recording.memory[0].live_bytes == 24);
  CHECK(p.recording.memory[2].live_bytes == p.recording.memory[0].live_bytes);
  CHECK(p.recording.memory[3].device == 0);
}

TEST_CASE("no memory samples are kept when not recording") {
  note_alloc(0, MemRole::data, 64);
  note_free(0, MemRole::data, 64);
  Session session;
  const Profile& p = session.stop();
  CHECK(p.recording.memory.empty());
}

}  // namespace
}  // namespace prism::profiler
