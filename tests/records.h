// What the profiler recorded for a few calls, for tests that check an op's recorded costs,
// allocations and phases.
#pragma once

#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

#include "profiler/session.h"

namespace prism::testing {

// Runs `fn` inside a session and returns every record.
inline std::vector<profiler::OpRecord> record(const std::function<void()>& fn) {
  profiler::Session session;
  fn();
  return session.stop().recording.records;
}

// The records of op `op` in `phase`, in order.
inline std::vector<profiler::OpRecord> named(const std::vector<profiler::OpRecord>& recs,
                                             const std::string& op, profiler::Phase phase) {
  std::vector<profiler::OpRecord> found;
  for (const profiler::OpRecord& r : recs) {
    if (op == r.op && r.phase == phase) found.push_back(r);
  }
  return found;
}

// The single record of op `op` in `phase` (a test failure if there is not exactly one).
inline profiler::OpRecord only(const std::vector<profiler::OpRecord>& recs, const std::string& op,
                               profiler::Phase phase = profiler::Phase::forward) {
  std::vector<profiler::OpRecord> found = named(recs, op, phase);
  INFO(("looking for one '" + op + "' record"));
  REQUIRE(found.size() == 1);
  return found.front();
}

}  // namespace prism::testing
