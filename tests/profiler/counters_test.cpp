// Event counters per op (profiler/counters.h): the multiplexing math and the group-read layout
// on synthetic numbers, the refusal notices with a forced failure, real software events, the
// hardware code path with software events standing in, and the attribution of counts to nested
// ops with a scripted reader.
#include <doctest/doctest.h>

#include <linux/perf_event.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "profiler/counters.h"
#include "profiler/reports.h"
#include "profiler_test_util.h"

namespace prism::profiler {
namespace {

using testing::busy_wait_ns;
using testing::open_plain;
using testing::records_named;

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

constexpr uint8_t kAll = 0xff;
constexpr uint8_t kSoftware = 0xe0;  // page faults, context switches, CPU migrations

TEST_CASE("scale_count corrects a multiplexed count by enabled / running time") {
  CHECK(scale_count(1000, 100, 100) == 1000);  // never multiplexed: exact
  CHECK(scale_count(1000, 200, 100) == 2000);  // on the PMU half the time: doubled
  CHECK(scale_count(7, 3, 2) == 11);           // 10.5 rounds away from zero
  CHECK(scale_count(1000, 200, 0) == 0);       // never counted: no estimate
  CHECK(scale_count(5, 100, 150) == 5);        // running > enabled cannot scale down
}

TEST_CASE("counts_between scales each group's deltas and leaves out what was not counted") {
  CounterReading a, b;
  a.mask = b.mask = kAll;
  // Hardware group: on the PMU for 500 of the 1000 ns in between.
  a.enabled_ns[0] = 1000, a.running_ns[0] = 800;
  b.enabled_ns[0] = 2000, b.running_ns[0] = 1300;
  a.raw[static_cast<int>(Counter::cycles)] = 100;
  b.raw[static_cast<int>(Counter::cycles)] = 400;
  a.raw[static_cast<int>(Counter::instructions)] = 50;
  b.raw[static_cast<int>(Counter::instructions)] = 650;
  // Software group: never multiplexed.
  a.enabled_ns[1] = a.running_ns[1] = 10;
  b.enabled_ns[1] = b.running_ns[1] = 30;
  a.raw[static_cast<int>(Counter::page_faults)] = 3;
  b.raw[static_cast<int>(Counter::page_faults)] = 10;
  // Went backwards: not a count.
  a.raw[static_cast<int>(Counter::branches)] = 9;
  b.raw[static_cast<int>(Counter::branches)] = 4;

  const CounterValues d = counts_between(a, b);
  CHECK(d.get(Counter::cycles) == 600);  // 300 x 1000 / 500
  CHECK(d.get(Counter::instructions) == 1200);
  CHECK(d.get(Counter::page_faults) == 7);
  CHECK(d.has(Counter::context_switches));  // counted, and 0 happened
  CHECK(d.get(Counter::context_switches) == 0);
  CHECK_FALSE(d.has(Counter::branches));

  // A counter only one reading has is left out; so is a group that never ran in between.
  CounterReading c = b;
  c.mask = static_cast<uint8_t>(kAll & ~counter_bit(Counter::cycles));
  CHECK_FALSE(counts_between(a, c).has(Counter::cycles));
  CounterReading stalled = b;
  stalled.running_ns[0] = a.running_ns[0];
  const CounterValues s = counts_between(a, stalled);
  CHECK_FALSE(s.has(Counter::cycles));
  CHECK(s.get(Counter::page_faults) == 7);
}

TEST_CASE("decode_group_read reads nr, the two times and nr values") {
  const uint64_t words[] = {3, 100, 60, 11, 22, 33};
  GroupRead g;
  REQUIRE(decode_group_read(words, 6, 3, &g));
  CHECK(g.enabled_ns == 100);
  CHECK(g.running_ns == 60);
  CHECK(g.count == 3);
  CHECK(g.values[0] == 11);
  CHECK(g.values[2] == 33);
  CHECK_FALSE(decode_group_read(words, 6, 2, &g));  // nr says 3
  CHECK_FALSE(decode_group_read(words, 5, 3, &g));  // short
  CHECK_FALSE(decode_group_read(words, 2, 0, &g));
}

TEST_CASE("add_counts and subtract_counts work on the counters present") {
  CounterValues a, b;
  a.set(Counter::cycles, 100);
  b.set(Counter::cycles, 30);
  b.set(Counter::page_faults, 4);
  CounterValues sum = a;
  add_counts(sum, b);
  CHECK(sum.get(Counter::cycles) == 130);
  CHECK(sum.get(Counter::page_faults) == 4);
  subtract_counts(a, b);
  CHECK(a.get(Counter::cycles) == 70);
  CHECK_FALSE(a.has(Counter::page_faults));  // a never counted it: nothing to subtract from
}

TEST_CASE("a machine that refuses hardware events gets one notice naming them and why") {
  // As on a virtual machine without a virtual PMU: ENOENT for hardware, software events open.
  const EventOpener vm = [](const EventRequest& r, int group) {
    return r.type == PERF_TYPE_HARDWARE ? -ENOENT : open_perf_event(r, group);
  };
  CounterSet set(vm, 2);
  CHECK((set.mask() & 0x1f) == 0);  // no hardware counter
  const std::string& n = set.notice();
  CHECK(contains(n, "hardware counters unavailable"));
  CHECK(contains(n, "cycles, instructions, branches, branch misses and cache misses"));
  CHECK(contains(n, "No such file or directory (ENOENT)"));
  CHECK(contains(n, "a virtual machine without a virtual PMU"));
  // Once: one sentence for the five events that failed alike.
  CHECK(n.find("hardware counters unavailable") == n.rfind("hardware counters unavailable"));

  // Readings carry no hardware counts at all: absent, not garbage.
  CounterReading r;
  for (uint64_t& v : r.raw) v = 0xdeadbeef;
  set.read(r);
  CHECK((r.mask & 0x1f) == 0);
  const CounterValues v = counts_between(r, r);
  CHECK_FALSE(v.has(Counter::cycles));
  CHECK(v.get(Counter::cycles) == 0);
}

TEST_CASE("a refusal by permission names perf_event_paranoid, and nothing open says so") {
  const EventOpener denied = [](const EventRequest&, int) { return -EACCES; };
  CounterSet set(denied, 3);
  CHECK(set.mask() == 0);
  CHECK(contains(set.notice(), "Permission denied (EACCES)"));
  CHECK(contains(set.notice(), "/proc/sys/kernel/perf_event_paranoid is 3"));
  CHECK(contains(set.notice(), "software counters unavailable"));
  CHECK(contains(set.notice(), "No counters could be opened"));
  CounterReading r;
  set.read(r);
  CHECK(r.mask == 0);

  CHECK(contains(open_failure_reason(EACCES, 2), "user space only"));
  CHECK(contains(open_failure_reason(ENOSYS, INT_MIN), "no perf events"));
  CHECK(contains(open_failure_reason(EPERM, INT_MIN), "could not be read"));
}

TEST_CASE("software events open and count on this machine: page faults of fresh memory") {
  CounterSet set;
  INFO(set.notice());
  REQUIRE(set.status().size() == kNumCounters);
  REQUIRE((set.mask() & counter_bit(Counter::page_faults)) != 0);
  CounterReading a, b;
  set.read(a);
  // First touch of 16 MiB: each new page is a fault (a few, with transparent huge pages).
  const size_t n = 16u << 20;
  auto buf = std::unique_ptr<char[]>(new char[n]);
  for (size_t i = 0; i < n; i += 4096) buf[i] = static_cast<char>(i);
  set.read(b);
  const CounterValues d = counts_between(a, b);
  CHECK(d.get(Counter::page_faults) > 0);
  CHECK(buf[4096] == static_cast<char>(4096));
}

// Stands software events in for the hardware ones, so the hardware group opens, is read with
// one read() and decoded by the same code a machine with a PMU runs.
int stand_in_opener(const EventRequest& r, int group) {
  if (r.type != PERF_TYPE_HARDWARE) return open_perf_event(r, group);
  EventRequest sw = r;
  sw.type = PERF_TYPE_SOFTWARE;
  // Time on the CPU (ns) for cycles and instructions; the rest count nothing (DUMMY) but
  // still take their places in the group and in the read.
  sw.config = r.counter == Counter::cycles || r.counter == Counter::instructions
                  ? PERF_COUNT_SW_TASK_CLOCK
                  : PERF_COUNT_SW_DUMMY;
  sw.exclude_kernel = false;
  return open_perf_event(sw, group);
}

TEST_CASE("the hardware group's path, with software events standing in, reads real counts") {
  CounterSet set(stand_in_opener, 2);
  INFO(set.notice());
  REQUIRE(set.mask() == kAll);
  CHECK(set.notice().empty());
  CounterReading a, b;
  set.read(a);
  busy_wait_ns(2'000'000);
  set.read(b);
  const CounterValues d = counts_between(a, b);
  // task-clock counts ns on the CPU: up to the 2 ms just spun (less when the machine is busy).
  CHECK(d.get(Counter::cycles) > 0);  // CPU time of a loaded machine: only "some" is certain
  CHECK(d.get(Counter::instructions) > 0);
  CHECK(d.has(Counter::cache_misses));

  // Through a session, into the table, the JSON and the trace.
  SessionOptions so;
  so.counter_reader = std::shared_ptr<CounterReader>(&set, [](CounterReader*) {});
  so.counter_reader_mask = set.mask();
  Session session(so);
  int32_t h = open_plain("ctr_spin", "naive", Cost{2'000'000, 1'000'000, 0});
  busy_wait_ns(1'000'000);
  close_op(h);
  const Profile& p = session.stop();
  const auto recs = records_named(p.recording, "ctr_spin");
  REQUIRE(recs.size() == 1);
  CHECK(recs[0]->counters.get(Counter::cycles) > 0);
  const std::string table = format_table(p);
  CHECK(contains(table, "IPC"));
  CHECK(contains(table, "miss/kFLOP"));
  CHECK(contains(table, "br miss %"));
  const auto j = nlohmann::json::parse(profile_json(p));
  REQUIRE(j.contains("counters"));
  CHECK(j["counters"]["notice"] == "");
  bool found = false;
  for (const auto& row : j["ops"]) {
    if (row["name"] != "ctr_spin") continue;
    found = true;
    CHECK(row["counters"]["cycles"].get<int64_t>() > 0);
    CHECK(row["counters"]["counted_calls"] == 1);
  }
  CHECK(found);
  CHECK(contains(trace_json(p), "\"cycles\""));
}

// The file descriptors this process has open.
int open_fds() {
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

TEST_CASE("a CounterSet closes every event it opened, also when opening the rest throws") {
  const int before = open_fds();
  {
    CounterSet set(stand_in_opener, 2);
    REQUIRE(set.mask() == kAll);
    CHECK(open_fds() >= before + kNumCounters);
  }
  CHECK(open_fds() == before);
  // The third event's open throws: the two that opened must not leak.
  int calls = 0;
  const EventOpener throws_third = [&calls](const EventRequest& r, int group) {
    if (++calls == 3) throw std::runtime_error("opener failed");
    return stand_in_opener(r, group);
  };
  CHECK_THROWS_AS(CounterSet(throws_third, 2), std::runtime_error);
  CHECK(calls == 3);
  CHECK(open_fds() == before);
}

// Readings made up by the test: each read returns `now`, which the test advances between the
// record boundaries, so every op's counts are known exactly.
struct ScriptedReader final : CounterReader {
  CounterReading now;
  int reads = 0;
  ScriptedReader(uint8_t mask) { now.mask = mask; }
  void read(CounterReading& out) override {
    out = now;
    ++reads;
  }
  void advance(Counter c, uint64_t n) { now.raw[static_cast<int>(c)] += n; }
  void advance_time(uint64_t enabled, uint64_t running) {
    for (int g = 0; g < 2; ++g) now.enabled_ns[g] += enabled, now.running_ns[g] += running;
  }
};

const OpRow* row_named(const std::vector<OpRow>& rows, const std::string& name) {
  for (const OpRow& r : rows) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

TEST_CASE("counts are attributed to ops as self time is: children subtracted through scopes") {
  auto reader = std::make_shared<ScriptedReader>(kAll);
  SessionOptions so;
  so.counter_reader = reader;
  so.counter_reader_mask = kAll;
  Profile p;
  {
    Session session(so);
    const int32_t outer = open_plain("ctr_outer");
    reader->advance(Counter::cycles, 100);
    reader->advance(Counter::page_faults, 2);
    reader->advance_time(10, 10);
    int32_t inner_ids[2];
    {
      Scope s("ctr_scope");  // not an op: its span reads nothing
      for (int32_t& id : inner_ids) {
        id = open_plain("ctr_inner");
        reader->advance(Counter::cycles, 30);
        reader->advance(Counter::page_faults, 1);
        reader->advance_time(10, 10);
        close_op(id);
      }
    }
    reader->advance(Counter::cycles, 5);
    reader->advance_time(10, 10);
    close_op(outer);
    // Another thread's op is recorded but not counted.
    std::thread([] { close_op(open_plain("ctr_other_thread")); }).join();
    p = session.stop();
  }
  CHECK(reader->reads == 6);  // 3 ops x (open + close); the scope read nothing

  const auto outer = records_named(p.recording, "ctr_outer");
  REQUIRE(outer.size() == 1);
  CHECK(outer[0]->counters.get(Counter::cycles) == 165);  // inclusive, like dur_ns

  const std::vector<OpRow> rows = aggregate_ops(p);
  const OpRow* o = row_named(rows, "ctr_outer");
  const OpRow* in = row_named(rows, "ctr_inner");
  const OpRow* other = row_named(rows, "ctr_other_thread");
  REQUIRE(o);
  REQUIRE(in);
  REQUIRE(other);
  CHECK(o->counters.get(Counter::cycles) == 105);  // 165 - 2 x 30
  CHECK(o->counters.get(Counter::page_faults) == 2);
  CHECK(o->counted_calls == 1);
  CHECK(in->counters.get(Counter::cycles) == 60);
  CHECK(in->counters.get(Counter::page_faults) == 2);
  CHECK(in->counted_calls == 2);
  CHECK(other->counted_calls == 0);
  CHECK_FALSE(other->counters.any());

  // The reports: the other thread's row shows "-", and its JSON counts are null.
  const auto j = nlohmann::json::parse(profile_json(p));
  for (const auto& row : j["ops"]) {
    if (row["name"] == "ctr_other_thread") CHECK(row["counters"]["cycles"].is_null());
    if (row["name"] == "ctr_inner") CHECK(row["counters"]["cycles"] == 60);
  }
  CHECK(contains(format_table(p), "ctx sw"));
}

TEST_CASE("every counted op keeps its own readings, over several chunks and sessions") {
  auto reader = std::make_shared<ScriptedReader>(kAll);
  SessionOptions so;
  so.counter_reader = reader;
  so.counter_reader_mask = kAll;
  // More counted ops than one chunk of the recorder's counter log holds (256), twice: the
  // second session reuses the first one's chunks.
  constexpr int kOps = 600;
  for (int session_no = 0; session_no < 2; ++session_no) {
    Profile p;
    {
      Session session(so);
      for (int i = 0; i < kOps; ++i) {
        Scope s("ctr_many_scope");  // uncounted records in between
        const int32_t h = open_plain("ctr_many");
        reader->advance(Counter::instructions, static_cast<uint64_t>(i + 1 + session_no));
        reader->advance_time(10, 10);
        close_op(h);
      }
      p = session.stop();
    }
    const auto recs = records_named(p.recording, "ctr_many");
    REQUIRE(recs.size() == kOps);
    int wrong = 0;
    for (int i = 0; i < kOps; ++i) {
      wrong +=
          recs[static_cast<size_t>(i)]->counters.get(Counter::instructions) != i + 1 + session_no;
    }
    CHECK(wrong == 0);
    for (const auto* r : records_named(p.recording, "ctr_many_scope")) {
      CHECK_FALSE(r->counters.any());
    }
  }
}

TEST_CASE("a multiplexed stretch is scaled per op, from the op's own enabled and running time") {
  auto reader = std::make_shared<ScriptedReader>(kAll);
  SessionOptions so;
  so.counter_reader = reader;
  so.counter_reader_mask = kAll;
  Session session(so);
  const int32_t h = open_plain("ctr_mux");
  reader->advance(Counter::cache_misses, 40);
  reader->now.enabled_ns[0] += 100;  // the hardware group ran a quarter of the op's time
  reader->now.running_ns[0] += 25;
  reader->now.enabled_ns[1] += 100;
  reader->now.running_ns[1] += 100;
  close_op(h);
  const Profile& p = session.stop();
  const auto recs = records_named(p.recording, "ctr_mux");
  REQUIRE(recs.size() == 1);
  CHECK(recs[0]->counters.get(Counter::cache_misses) == 160);
}

TEST_CASE("without counters nothing is read, and the reports add no counter columns") {
  auto reader = std::make_shared<ScriptedReader>(kAll);
  {
    // A counting session, then one without: the second must not keep reading.
    SessionOptions so;
    so.counter_reader = reader;
    so.counter_reader_mask = kAll;
    Session counting(so);
    close_op(open_plain("ctr_first"));
  }
  const int reads = reader->reads;
  Session session;
  close_op(open_plain("ctr_plain"));
  const Profile& p = session.stop();
  CHECK(reader->reads == reads);
  CHECK_FALSE(p.counters.enabled);
  CHECK_FALSE(records_named(p.recording, "ctr_plain")[0]->counters.any());
  const std::string table = format_table(p);
  CHECK_FALSE(contains(table, "page faults"));
  CHECK_FALSE(contains(table, "counters:"));
  CHECK_FALSE(nlohmann::json::parse(profile_json(p)).contains("counters"));
}

TEST_CASE("a session with counters on the machine's own events reports what opened") {
  SessionOptions so;
  so.counters = true;
  Session session(so);
  close_op(open_plain("ctr_real"));
  const Profile& p = session.stop();
  CHECK(p.counters.enabled);
  const std::string table = format_table(p);
  CHECK(contains(table, "counters: "));
  // Either all opened (a machine with a PMU) or the notice says which did not.
  if (p.counters.mask != kAll) CHECK_FALSE(p.counters.notice.empty());
  if ((p.counters.mask & kSoftware) == kSoftware) CHECK(contains(table, "page faults"));
}

}  // namespace
}  // namespace prism::profiler
