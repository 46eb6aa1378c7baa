// Records, nesting, scopes and the phase / gradient labels every record carries.
#include <doctest/doctest.h>

#include <string>

#include "profiler/session.h"
#include "profiler_test_util.h"

namespace prism::profiler {
namespace {

using testing::busy_wait_ns;
using testing::open_plain;
using testing::records_named;
using testing::shapes_of;

TEST_CASE("ShapeList keeps shapes in order and prints them") {
  ShapeList s = shapes_of({{2, 3}, {3, 4}});
  CHECK(s.count == 2);
  CHECK_FALSE(s.truncated);
  CHECK(s.to_string() == "[2,3] [3,4]");

  ShapeList scalar = shapes_of({{}});
  CHECK(scalar.to_string() == "[]");
  CHECK(ShapeList{}.to_string().empty());
}

TEST_CASE("ShapeList truncates too many shapes or dims and says so") {
  ShapeList many = shapes_of({{1}, {2}, {3}, {4}, {5}});
  CHECK(many.count == ShapeList::kMaxShapes);
  CHECK(many.truncated);
  CHECK(many.to_string() == "[1] [2] [3] [4] ...");

  ShapeList deep = shapes_of({{1, 2, 3, 4, 5, 6, 7, 8}});
  CHECK(deep.count == 1);
  CHECK(deep.ndim[0] == ShapeList::kMaxDims);
  CHECK(deep.truncated);
  CHECK(deep.to_string() == "[1,2,3,4,5,6] ...");
}

TEST_CASE("nested op records know their parent and depth, and contain their children") {
  Session session;
  int32_t outer = open_plain("nest_outer");
  busy_wait_ns(20'000);
  int32_t inner = open_plain("nest_inner");
  busy_wait_ns(50'000);
  close_op(inner);
  busy_wait_ns(20'000);
  close_op(outer);
  int32_t after = open_plain("nest_after");
  close_op(after);
  const Profile& p = session.stop();

  REQUIRE(p.recording.records.size() == 3);
  const OpRecord& o = p.recording.records[0];
  const OpRecord& i = p.recording.records[1];
  const OpRecord& a = p.recording.records[2];
  CHECK(std::string(o.op) == "nest_outer");
  CHECK(std::string(i.op) == "nest_inner");
  CHECK(o.parent == -1);
  CHECK(o.depth == 0);
  CHECK(i.parent == 0);
  CHECK(i.depth == 1);
  CHECK(a.parent == -1);
  CHECK(a.depth == 0);
  CHECK(i.dur_ns >= 50'000);
  CHECK(o.dur_ns >= i.dur_ns + 40'000);
  CHECK(i.start_ns >= o.start_ns);
  CHECK(i.start_ns + i.dur_ns <= o.start_ns + o.dur_ns);
  CHECK(a.start_ns >= o.start_ns + o.dur_ns);
  CHECK(o.start_ns >= p.recording.start_ns);
  CHECK(o.start_ns + o.dur_ns <= p.recording.stop_ns);
}

TEST_CASE("op records keep their labels, cost and shapes") {
  Session session;
  ShapeList shapes = shapes_of({{2, 3}, {3, 4}});
  close_op(open_op("labels_matmul", "optimized", "cpu", Cost{48, 24, 120}, shapes));
  const Profile& p = session.stop();
  REQUIRE(p.recording.records.size() == 1);
  const OpRecord& r = p.recording.records[0];
  CHECK(r.kind == Kind::op);
  CHECK(std::string(r.variant) == "optimized");
  CHECK(std::string(r.device) == "cpu");
  CHECK(r.cost == Cost{48, 24, 120});
  CHECK(r.shapes.to_string() == "[2,3] [3,4]");
  CHECK(r.phase == Phase::forward);
  CHECK(std::string(r.grad_of).empty());
  CHECK(r.scope == 0);
}

TEST_CASE("scopes nest into dotted paths and intern each path once") {
  int32_t fc1_id = -1;
  int32_t model_id = -1;
  {
    Scope model("rt_model");
    model_id = current_scope();
    {
      Scope fc1("fc1");
      fc1_id = current_scope();
      CHECK(scope_path(fc1_id) == "rt_model.fc1");
    }
    CHECK(current_scope() == model_id);
  }
  CHECK(current_scope() == 0);
  CHECK(scope_path(0).empty());
  CHECK(scope_path(model_id) == "rt_model");

  // The same path entered again gets the same id; the same name under another parent does not.
  {
    Scope model("rt_model");
    Scope fc1("fc1");
    CHECK(current_scope() == fc1_id);
  }
  {
    Scope other("rt_other");
    Scope fc1("fc1");
    CHECK(current_scope() != fc1_id);
    CHECK(scope_path(current_scope()) == "rt_other.fc1");
  }
  CHECK(scope_paths().at(static_cast<size_t>(fc1_id)) == "rt_model.fc1");

  {
    ScopeRestore restore(fc1_id);
    CHECK(current_scope() == fc1_id);
  }
  CHECK(current_scope() == 0);
}

TEST_CASE("scopes are records while recording, and tag the ops inside") {
  Session session;
  {
    Scope model("rs_model");
    Scope fc1("fc1");
    close_op(open_plain("rs_op"));
  }
  const Profile& p = session.stop();
  REQUIRE(p.recording.records.size() == 3);
  const OpRecord& model = p.recording.records[0];
  const OpRecord& fc1 = p.recording.records[1];
  const OpRecord& op = p.recording.records[2];
  CHECK(model.kind == Kind::scope);
  CHECK(std::string(model.op) == "rs_model");
  CHECK(fc1.kind == Kind::scope);
  CHECK(std::string(fc1.op) == "fc1");
  CHECK(fc1.parent == 0);
  CHECK(op.kind == Kind::op);
  CHECK(op.parent == 1);
  CHECK(op.depth == 2);
  CHECK(p.recording.scope_paths.at(static_cast<size_t>(op.scope)) == "rs_model.fc1");
  CHECK(p.recording.scope_paths.at(static_cast<size_t>(fc1.scope)) == "rs_model.fc1");
}

TEST_CASE("PhaseGuard and GradOfGuard label the records opened inside, then restore") {
  Session session;
  close_op(open_plain("pg_fwd"));
  {
    PhaseGuard phase(Phase::backward);
    CHECK(current_phase() == Phase::backward);
    {
      GradOfGuard grad("pg_matmul.dA");
      CHECK(std::string(current_grad_of()) == "pg_matmul.dA");
      close_op(open_plain("pg_matmul"));
    }
    CHECK(std::string(current_grad_of()).empty());
    close_op(open_plain("pg_bwd_plain"));
  }
  {
    PhaseGuard phase(Phase::optimizer);
    close_op(open_plain("pg_step"));
  }
  CHECK(current_phase() == Phase::forward);
  const Profile& p = session.stop();

  REQUIRE(p.recording.records.size() == 4);
  CHECK(p.recording.records[0].phase == Phase::forward);
  CHECK(p.recording.records[1].phase == Phase::backward);
  CHECK(std::string(p.recording.records[1].grad_of) == "pg_matmul.dA");
  CHECK(p.recording.records[2].phase == Phase::backward);
  CHECK(std::string(p.recording.records[2].grad_of).empty());
  CHECK(p.recording.records[3].phase == Phase::optimizer);
  CHECK(std::string(phase_name(Phase::backward)) == "backward");
  CHECK(std::string(phase_name(Phase::optimizer)) == "optimizer");
}

TEST_CASE("the measured record overhead is positive and cached") {
  double first = record_overhead_ns();
  CHECK(first > 0.0);
  CHECK(record_overhead_ns() == first);
}

}  // namespace
}  // namespace prism::profiler
