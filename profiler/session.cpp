#include "profiler/session.h"

#include <atomic>
#include <stdexcept>

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

Session::Session() {
  bool expected = false;
  if (!g_session_active.compare_exchange_strong(expected, true)) {
    throw std::logic_error(
        "profiler: a Session is already recording; stop it before starting another");
  }
  active_ = true;
  profile_.meta = collect_meta();
  start_recording();
}

Session::~Session() {
  if (active_) stop();
}

const Profile& Session::stop() {
  if (active_) {
    profile_.recording = stop_recording();
    active_ = false;
    g_session_active.store(false);
  }
  return profile_;
}

}  // namespace prism::profiler
