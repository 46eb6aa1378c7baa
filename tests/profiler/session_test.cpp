// Session lifetime: one at a time, stop once, restartable.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "profiler/session.h"
#include "profiler_test_util.h"

namespace prism::profiler {
namespace {

using testing::open_plain;

TEST_CASE("a second concurrent Session throws, and the first keeps recording") {
  Session first;
  CHECK(first.active());
  CHECK(recording());
  CHECK_THROWS_AS(Session second, std::logic_error);
  CHECK(recording());
  close_op(open_plain("sess_op"));
  const Profile& p = first.stop();
  CHECK(p.recording.records.size() == 1);
}

TEST_CASE("stop is idempotent and returns the same profile") {
  Session session;
  close_op(open_plain("sess_once"));
  const Profile& p1 = session.stop();
  CHECK_FALSE(session.active());
  CHECK_FALSE(recording());
  const int64_t stop_ns = p1.recording.stop_ns;
  const Profile& p2 = session.stop();
  CHECK(&p1 == &p2);
  CHECK(p2.recording.stop_ns == stop_ns);
  CHECK(p2.recording.records.size() == 1);
  CHECK(p2.wall_ns() == p2.recording.stop_ns - p2.recording.start_ns);
  CHECK(p2.wall_ns() > 0);
}

TEST_CASE("a new Session starts clean after the previous one ended") {
  {
    Session s;
    close_op(open_plain("sess_old"));
  }  // the destructor stops it
  CHECK_FALSE(recording());
  Session s;
  close_op(open_plain("sess_new"));
  const Profile& p = s.stop();
  REQUIRE(p.recording.records.size() == 1);
  CHECK(std::string(p.recording.records[0].op) == "sess_new");
}

TEST_CASE("the session meta says how the numbers were made") {
  Session s;
  const Profile& p = s.stop();
  CHECK_FALSE(p.meta.version.empty());
  CHECK(p.meta.threads >= 1);
  CHECK_FALSE(p.meta.compiler.empty());
  CHECK_FALSE(p.meta.clock.empty());
  CHECK(p.meta.clock_resolution_ns > 0.0);
  CHECK(p.meta.overhead_ns_per_op > 0.0);
}

}  // namespace
}  // namespace prism::profiler
