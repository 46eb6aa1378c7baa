// Sessions started and stopped while other threads record: std::threads, OpenMP workers, and
// threads that come and go. Whatever the interleaving, every collected record must be
// well-formed; the assertions are the guarantees of the recorder's threading protocol
// (profiler/recorder.cpp), never timings. `make tsan` runs this file under ThreadSanitizer,
// which turns any unsynchronised access in the protocol into a failure.
//
// doctest's assertions run on the test's main thread only: worker threads and OpenMP regions
// note what they saw in atomics or vectors that are checked afterwards.
#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <functional>
#include <iterator>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "profiler/memory.h"
#include "profiler/session.h"
#include "profiler_test_util.h"

namespace prism::profiler {
namespace {

using testing::open_plain;
using testing::records_named;

constexpr int64_t kAllocBytes = 64;

// An op as the dispatcher opens one (tensor/dispatch.h): only while recording.
class TestOp {
 public:
  explicit TestOp(const char* name) {
    if (recording()) handle_ = open_plain(name);
  }
  ~TestOp() {
    if (handle_ >= 0) close_op(handle_);
  }
  TestOp(const TestOp&) = delete;
  TestOp& operator=(const TestOp&) = delete;

 private:
  int32_t handle_ = -1;
};

// What a worker does between two looks at the controller: nested ops with an allocation, now
// and then a scope with an op inside. Nothing is left open when it returns.
void do_work(int64_t i) {
  TestOp outer("thr_outer");
  note_alloc(0, MemRole::temporary, kAllocBytes);
  {
    TestOp inner("thr_inner");
    for (int64_t k = 0; k < i % 5; ++k) (void)now_ns();
  }
  note_free(0, MemRole::temporary, kAllocBytes);
  if (i % 8 == 0) {
    Scope scope("thr_scope");
    TestOp op("thr_in_scope");
    const int64_t dims[2] = {2, 3};
    note_scope_output(dims, 2);
  }
}

// Checks what the protocol promises of any recording, whatever the threads were doing when it
// stopped; returns the problems found (empty when well-formed).
std::vector<std::string> problems_in(const Recording& rec) {
  std::vector<std::string> bad;
  auto fail = [&](size_t i, const std::string& what) {
    bad.push_back("record " + std::to_string(i) + " (" + rec.records[i].op + "): " + what);
  };
  static constexpr std::string_view kOps[] = {"thr_outer",    "thr_inner",     "thr_scope",
                                              "thr_in_scope", "thr_handshake", "thr_short"};
  constexpr int32_t kMaxTid = 256;
  std::vector<int64_t> last_start(kMaxTid, INT64_MIN);  // per tid
  for (size_t i = 0; i < rec.records.size(); ++i) {
    const OpRecord& r = rec.records[i];
    const std::string_view op = r.op;
    if (std::find(std::begin(kOps), std::end(kOps), op) == std::end(kOps)) fail(i, "unknown op");
    if ((r.kind == Kind::scope) != (op == "thr_scope")) fail(i, "wrong kind");
    if (r.dur_ns < 0) fail(i, "negative duration");
    if (r.start_ns < rec.start_ns) fail(i, "starts before the session");
    if (r.start_ns + r.dur_ns > rec.stop_ns) fail(i, "ends after the session");
    if (r.tid < 0 || r.tid >= kMaxTid) {
      fail(i, "tid out of range");
      continue;
    }
    int64_t& last = last_start[static_cast<size_t>(r.tid)];
    if (r.start_ns < last) fail(i, "not in start order on its thread");
    last = r.start_ns;
    if (r.parent < 0) {
      if (r.depth != 0) fail(i, "no parent but depth " + std::to_string(r.depth));
    } else {
      if (r.parent >= static_cast<int32_t>(i)) fail(i, "parent after the child");
      const OpRecord& p = rec.records[static_cast<size_t>(r.parent)];
      if (p.tid != r.tid) fail(i, "parent on another thread");
      if (r.depth != p.depth + 1) fail(i, "depth is not the parent's + 1");
      if (r.start_ns < p.start_ns || r.start_ns + r.dur_ns > p.start_ns + p.dur_ns) {
        fail(i, "outside its parent");
      }
      if (op == "thr_inner" && std::string_view(p.op) != "thr_outer") fail(i, "not in outer");
      if (op == "thr_in_scope" && std::string_view(p.op) != "thr_scope") fail(i, "not in scope");
    }
    // Allocation counts: an outer op holds one allocation (none if cut at the stop), the
    // others none.
    if (r.alloc_bytes != r.allocs * kAllocBytes) fail(i, "bytes do not match the count");
    const int64_t max_allocs = (op == "thr_outer" || op == "thr_short") ? 1 : 0;
    if (r.allocs < 0 || r.allocs > max_allocs) fail(i, "allocs " + std::to_string(r.allocs));
    if (op == "thr_scope" || op == "thr_in_scope") {
      const std::string& path = rec.scope_paths.at(static_cast<size_t>(r.scope));
      if (path != "thr_scope") fail(i, "scope path '" + path + "'");
    }
    if (op == "thr_scope" && r.shapes.count != 0 && r.shapes.to_string() != "[2,3]") {
      fail(i, "scope output " + r.shapes.to_string());
    }
  }
  std::vector<int64_t> last_sample(kMaxTid, INT64_MIN);  // per tid
  for (size_t i = 0; i < rec.memory.size(); ++i) {
    const MemSample& m = rec.memory[i];
    auto fail_sample = [&](const char* what) {
      bad.push_back("memory sample " + std::to_string(i) + ": " + what);
    };
    if (m.t_ns < rec.start_ns || m.t_ns > rec.stop_ns) fail_sample("outside the session");
    if (m.tid < 0 || m.tid >= kMaxTid) {
      fail_sample("tid out of range");
      continue;
    }
    int64_t& last = last_sample[static_cast<size_t>(m.tid)];
    if (m.t_ns < last) fail_sample("not in time order on its thread");
    last = m.t_ns;
  }
  return bad;
}

// The controller asks the workers for a handshake op by raising `want`; each answers once per
// round, through its `ack`.
struct Control {
  static constexpr int kMaxWorkers = 16;
  std::atomic<bool> done{false};
  std::atomic<int> want{0};
  std::atomic<int> ack[kMaxWorkers] = {};
  std::atomic<int64_t> ops[kMaxWorkers] = {};  // work items finished, per worker
};

void worker_loop(Control& c, int w) {
  int seen = 0;
  int64_t i = 0;
  while (!c.done.load(std::memory_order_acquire)) {
    const int want = c.want.load(std::memory_order_acquire);
    if (want != seen) {
      // The controller started the session before raising `want`, and stops it only after
      // this ack: the op lies inside the session, so the profile must hold it, exactly once.
      { TestOp op("thr_handshake"); }
      seen = want;
      c.ack[w].store(want, std::memory_order_release);
    }
    do_work(i++);
    c.ops[w].store(i, std::memory_order_release);
  }
}

// Starts and stops `rounds` sessions while `workers` threads run worker_loop. Every other
// round stops at once, with the workers somewhere inside their ops; the others first wait for
// a handshake op from each worker. Returns the problems found.
std::vector<std::string> run_sessions(Control& c, int workers, int rounds) {
  std::vector<std::string> bad;
  for (int round = 1; round <= rounds; ++round) {
    Session session;
    const bool handshake = round % 2 == 0;
    if (handshake) {
      c.want.store(round, std::memory_order_release);
      for (int w = 0; w < workers; ++w) {
        while (c.ack[w].load(std::memory_order_acquire) != round) std::this_thread::yield();
      }
    }
    const Profile& p = session.stop();
    for (const std::string& s : problems_in(p.recording)) {
      bad.push_back("round " + std::to_string(round) + ": " + s);
    }
    if (handshake) {
      const auto hs = records_named(p.recording, "thr_handshake");
      std::set<int32_t> tids;
      for (const OpRecord* r : hs) tids.insert(r->tid);
      if (hs.size() != static_cast<size_t>(workers) || tids.size() != hs.size()) {
        bad.push_back("round " + std::to_string(round) + ": " + std::to_string(hs.size()) +
                      " handshake records on " + std::to_string(tids.size()) + " threads, " +
                      std::to_string(workers) + " expected");
      }
    }
  }
  return bad;
}

TEST_CASE("sessions start and stop while std::threads record ops") {
  constexpr int kWorkers = 3;
  const MemoryStats before = memory_stats(0);
  Control c;
  std::vector<std::thread> threads;
  for (int w = 0; w < kWorkers; ++w) threads.emplace_back(worker_loop, std::ref(c), w);
  const std::vector<std::string> bad = run_sessions(c, kWorkers, 100);
  c.done.store(true, std::memory_order_release);
  for (std::thread& t : threads) t.join();
  CHECK(bad.empty());
  for (size_t i = 0; i < bad.size() && i < 10; ++i) MESSAGE(bad[i]);
  CHECK_FALSE(recording());
  // Every allocation was freed, whichever session (if any) saw it.
  CHECK(memory_stats(0).live_bytes == before.live_bytes);
}

TEST_CASE("sessions start and stop on an OpenMP region's master while its workers record") {
  Control c;
  std::vector<std::string> bad;
  int workers = 0;
#pragma omp parallel num_threads(4)
  {
    const int t = omp_get_thread_num();
    if (t == 0) {
      workers = omp_get_num_threads() - 1;
      bad = run_sessions(c, workers, 100);
      c.done.store(true, std::memory_order_release);
    } else if (t - 1 < Control::kMaxWorkers) {
      worker_loop(c, t - 1);
    }
  }
  CHECK(workers >= 0);
  CHECK(bad.empty());
  for (size_t i = 0; i < bad.size() && i < 10; ++i) MESSAGE(bad[i]);
}

TEST_CASE("a thread starts and stops sessions while OpenMP loops record ops") {
  // The shape of a profiled training step: parallel loops in kernels, their pooled threads
  // recording (allocations, nested ops), while the session is stopped from another thread.
  std::atomic<bool> done{false};
  std::atomic<int64_t> regions{0};
  std::vector<std::string> bad;
  std::thread controller([&] {
    for (int round = 1; round <= 100; ++round) {
      Session session;
      // Stop once the loops have moved on by a region or two: mid-region, most of the time.
      const int64_t seen = regions.load(std::memory_order_acquire);
      while (regions.load(std::memory_order_acquire) < seen + 1 + round % 2) {
        std::this_thread::yield();
      }
      const Profile& p = session.stop();
      for (const std::string& s : problems_in(p.recording)) {
        bad.push_back("round " + std::to_string(round) + ": " + s);
      }
    }
    done.store(true, std::memory_order_release);
  });
  while (!done.load(std::memory_order_acquire)) {
#pragma omp parallel for num_threads(4) schedule(dynamic, 1)
    for (int64_t i = 0; i < 16; ++i) do_work(i);
    regions.fetch_add(1, std::memory_order_release);
  }
  controller.join();
  CHECK(regions.load() >= 100);
  CHECK(bad.empty());
  for (size_t i = 0; i < bad.size() && i < 10; ++i) MESSAGE(bad[i]);
}

TEST_CASE("a stopped session's profile does not change while workers keep recording") {
  constexpr int kWorkers = 2;
  Control c;
  std::vector<std::thread> threads;
  for (int w = 0; w < kWorkers; ++w) threads.emplace_back(worker_loop, std::ref(c), w);
  Session session;
  c.want.store(1, std::memory_order_release);
  for (int w = 0; w < kWorkers; ++w) {
    while (c.ack[w].load(std::memory_order_acquire) != 1) std::this_thread::yield();
  }
  const Profile& p = session.stop();
  const std::vector<OpRecord> copy = p.recording.records;
  const size_t samples = p.recording.memory.size();
  // Let every worker finish a few more work items, then look again.
  for (int w = 0; w < kWorkers; ++w) {
    const int64_t seen = c.ops[w].load(std::memory_order_acquire);
    while (c.ops[w].load(std::memory_order_acquire) < seen + 4) std::this_thread::yield();
  }
  c.done.store(true, std::memory_order_release);
  for (std::thread& t : threads) t.join();
  REQUIRE(p.recording.records.size() == copy.size());
  for (size_t i = 0; i < copy.size(); ++i) {
    CHECK(p.recording.records[i].start_ns == copy[i].start_ns);
    CHECK(p.recording.records[i].dur_ns == copy[i].dur_ns);
  }
  CHECK(p.recording.memory.size() == samples);
  CHECK(records_named(p.recording, "thr_handshake").size() == kWorkers);
  CHECK(problems_in(p.recording).empty());
}

TEST_CASE("a record opened in one session and closed in the next is in neither") {
  // A worker opens an op in session 1 and closes it in session 2, with ops of session 2 nested
  // inside; each step is handed over explicitly, so the outcome is exact.
  std::atomic<int> step{0};
  auto wait_for = [&](int s) {
    while (step.load(std::memory_order_acquire) != s) std::this_thread::yield();
  };
  int32_t worker_tid = -1;
  std::thread worker([&] {
    wait_for(1);
    const int32_t held = open_plain("thr_held");
    note_alloc(0, MemRole::temporary, kAllocBytes);  // a sample of session 1
    step.store(2, std::memory_order_release);
    wait_for(3);
    {
      TestOp inside("thr_inside");  // session 2, inside an op of session 1
      note_free(0, MemRole::temporary, kAllocBytes);
    }
    close_op(held);
    { TestOp after("thr_after"); }
    step.store(4, std::memory_order_release);
  });

  Session first;
  step.store(1, std::memory_order_release);
  wait_for(2);
  Profile p1 = first.stop();  // while the worker's op is open
  Session second;
  step.store(3, std::memory_order_release);
  wait_for(4);
  const Profile& p2 = second.stop();
  worker.join();

  // Session 1: the open op, cut at the stop, and its allocation's sample.
  const auto held = records_named(p1.recording, "thr_held");
  REQUIRE(held.size() == 1);
  worker_tid = held[0]->tid;
  CHECK(held[0]->start_ns + held[0]->dur_ns == p1.recording.stop_ns);
  CHECK(held[0]->allocs == 0);  // unknown for a record cut at the stop
  CHECK(p1.recording.records.size() == 1);
  REQUIRE(p1.recording.memory.size() == 1);
  CHECK(p1.recording.memory[0].tid == worker_tid);

  // Session 2: the ops opened in it, at the top level; nothing of session 1.
  CHECK(records_named(p2.recording, "thr_held").empty());
  const auto inside = records_named(p2.recording, "thr_inside");
  const auto after = records_named(p2.recording, "thr_after");
  REQUIRE(inside.size() == 1);
  REQUIRE(after.size() == 1);
  CHECK(inside[0]->parent == -1);
  CHECK(inside[0]->depth == 0);
  CHECK(after[0]->depth == 0);
  CHECK(inside[0]->tid == worker_tid);
  CHECK(p2.recording.records.size() == 2);
  REQUIRE(p2.recording.memory.size() == 1);  // the free, not session 1's alloc
  CHECK(p2.recording.memory[0].tid == worker_tid);
  CHECK(p2.recording.memory[0].t_ns >= p2.recording.start_ns);
}

TEST_CASE("threads that come and go during a session are all collected, on reused buffers") {
  constexpr int kThreads = 20;
  Session session;
  for (int k = 0; k < kThreads; ++k) {
    std::thread t([] {
      TestOp op("thr_short");
      note_alloc(0, MemRole::temporary, kAllocBytes);
      note_free(0, MemRole::temporary, kAllocBytes);
    });
    t.join();
  }
  const Profile& p = session.stop();
  CHECK(problems_in(p.recording).empty());
  const auto shorts = records_named(p.recording, "thr_short");
  REQUIRE(shorts.size() == kThreads);
  // Each thread hands its buffer back when it exits and the next one takes it: one tid for
  // all twenty, and no buffer left behind per thread.
  std::set<int32_t> tids;
  for (const OpRecord* r : shorts) {
    tids.insert(r->tid);
    CHECK(r->allocs == 1);
  }
  CHECK(tids.size() == 1);
  CHECK(p.recording.memory.size() == 2 * kThreads);
}

TEST_CASE("reset_peak racing allocations never leaves the peak below a live buffer") {
  // Device 2 (meta) so the other tests' device-0 figures are untouched; the sizes are only
  // numbers. While a thread's buffer of kBig bytes is live, the peak must be at least kBig,
  // however reset_peak interleaves with the allocation.
  constexpr int kDevice = 2;
  constexpr int64_t kBig = int64_t{1} << 40;
  std::atomic<bool> done{false};
  std::atomic<int> below{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        note_alloc(kDevice, MemRole::temporary, kBig);
        if (memory_stats(kDevice).peak_bytes < kBig) below.fetch_add(1);
        note_free(kDevice, MemRole::temporary, kBig);
      }
    });
  }
  std::thread resetter([&] {
    while (!done.load(std::memory_order_acquire)) reset_peak(kDevice);
  });
  for (std::thread& t : threads) t.join();
  done.store(true, std::memory_order_release);
  resetter.join();
  CHECK(below.load() == 0);
  const MemoryStats s = memory_stats(kDevice);
  CHECK(s.peak_bytes >= s.live_bytes);
}

}  // namespace
}  // namespace prism::profiler
