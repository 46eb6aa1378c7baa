#include "profiler/session.h"

#include <atomic>
#include <memory>
#include <stdexcept>
#include <utility>

#include "profiler/build_info.h"
#include "profiler/clock.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace prism::profiler {

namespace {
// One session at a time. Also what orders a session's collection (stop_recording, before the
// flag is cleared) before the next session's start (after it is set again): the recorder's
// threads rely on it to recycle their buffers (recorder.cpp, rule 3).
std::atomic<bool> g_session_active{false};

double measure_clock_resolution_ns() {
  // Smallest positive difference between consecutive reads, over a few thousand tries.
  int64_t best = INT64_MAX;
  for (int i = 0; i < 2000; ++i) {
    int64_t a = now_ns();
    int64_t b = now_ns();
    while (b == a) b = now_ns();
    if (b - a < best) best = b - a;
  }
  return static_cast<double>(best);
}
}  // namespace

Meta collect_meta() {
  Meta m;
  m.version = build_info::kVersion;
#ifdef _OPENMP
  m.threads = omp_get_max_threads();
#else
  m.threads = 1;
#endif
  m.compiler = build_info::kCompiler;
  m.flags = build_info::kFlags;
  m.build_type = build_info::kBuildType;
  m.clock = "std::chrono::steady_clock (CLOCK_MONOTONIC)";
  static const double resolution = measure_clock_resolution_ns();
  m.clock_resolution_ns = resolution;
  m.overhead_ns_per_op = record_overhead_ns();
  return m;
}

Session::Session(const SessionOptions& options) {
  bool expected = false;
  if (!g_session_active.compare_exchange_strong(expected, true)) {
    throw std::logic_error(
        "profiler: a Session is already recording; stop it before starting another");
  }
  active_ = true;
  try {
    start(options);
  } catch (...) {
    // No destructor runs for a constructor that throws: free the slot, or no session could
    // ever start again in this process.
    active_ = false;
    g_session_active.store(false);
    throw;
  }
}

void Session::start(const SessionOptions& options) {
  profile_.meta = collect_meta();  // calibrates the record overhead first, without counters
  if (options.counters || options.counter_reader) {
    std::shared_ptr<CounterReader> reader = options.counter_reader;
    CounterInfo& info = profile_.counters;
    info.enabled = true;
    if (reader) {
      info.mask = options.counter_reader_mask;
    } else {
      auto set = std::make_shared<CounterSet>();
      info.mask = set->mask();
      info.notice = set->notice();
      if (set->mask() != 0) info.read_ns = measure_read_ns(*set);
      reader = std::move(set);
    }
    if (info.mask != 0) {
      set_thread_counters(std::move(reader));
      counting_ = true;
    }
  }
  // A reader left on this thread by a counting session stopped from another thread goes now.
  if (!counting_) set_thread_counters(nullptr);
  start_recording();
}

Session::~Session() {
  if (active_) stop();
}

const Profile& Session::stop() {
  if (active_) {
    profile_.recording = stop_recording();
    // From the session's own thread this drops the reader at once; from another thread the
    // starting thread keeps it until its next session (recorder.h), reading only while recording.
    if (counting_) {
      set_thread_counters(nullptr);
      counting_ = false;
    }
    active_ = false;
    g_session_active.store(false);
  }
  return profile_;
}

}  // namespace prism::profiler
