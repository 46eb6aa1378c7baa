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
// holds); one Session object is used by one thread at a time.
#pragma once

#include <string>

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
  int64_t wall_ns() const { return recording.stop_ns - recording.start_ns; }
};

class Session {
 public:
  Session();
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Stops recording (once) and returns the profile; later calls return the same profile.
  const Profile& stop();
  bool active() const { return active_; }

 private:
  bool active_ = false;
  Profile profile_;
};

}  // namespace prism::profiler
