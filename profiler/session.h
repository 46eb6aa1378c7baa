// A profiling session: RAII, records every op and scope while it lives.
//
//   {
//     prism::profiler::Session session;
//     train_step();
//     const auto& profile = session.stop();
//     std::cout << prism::profiler::format_table(profile);
//   }
//
// One session at a time per process; starting a second while one runs is an error. Other
// threads may keep recording while it starts and stops (recorder.h says what the profile then
// holds); one Session object is used by one thread at a time. With SessionOptions::counters the
// op records of the thread that starts the session also carry event counts (counters.h); stop
// it from that thread too, which closes the counters at once.
#pragma once

#include <memory>
#include <string>

#include "profiler/counters.h"
#include "profiler/recorder.h"

namespace prism::profiler {

// Facts about the run that every report prints, so a number is never read without its context.
struct Meta {
  std::string version;
  int threads = 1;
  std::string compiler;
  std::string flags;
  std::string build_type;
  std::string clock;               // "steady_clock (CLOCK_MONOTONIC)"
  double clock_resolution_ns = 0;  // smallest observed non-zero step
  double overhead_ns_per_op = 0;   // measured open+close cost of one record
};

Meta collect_meta();

struct Profile {
  Recording recording;
  Meta meta;
  CounterInfo counters;  // enabled only when the session counted events (SessionOptions)
  int64_t wall_ns() const { return recording.stop_ns - recording.start_ns; }
};

struct SessionOptions {
  // Count events per op (counters.h) on the thread that starts the session. Opening them costs
  // a few system calls; events the machine refuses are named in Profile::counters.notice.
  bool counters = false;
  // Tests: read counts from this instead of opening perf events (implies counters).
  std::shared_ptr<CounterReader> counter_reader;
  // What the profile reports as open when counter_reader is given.
  uint8_t counter_reader_mask = 0;
};

class Session {
 public:
  explicit Session(const SessionOptions& options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Stops recording (once) and returns the profile; later calls return the same profile.
  const Profile& stop();
  bool active() const { return active_; }

 private:
  void start(const SessionOptions& options);  // the constructor's work once the slot is taken

  bool active_ = false;
  bool counting_ = false;  // this session gave its thread a counter reader
  Profile profile_;
};

}  // namespace prism::profiler
