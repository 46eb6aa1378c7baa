// The text table: rows, units, grad_of labels, row limit and the meta footer.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "profiler/reports.h"
#include "profiler_test_util.h"

namespace prism::profiler {
namespace {

using testing::busy_wait_ns;
using testing::open_plain;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// A small profile: a forward matmul of 2 GFLOP, its backward pieces, and a cheap add.
const Profile& sample_profile(Session& session) {
  int32_t mm = open_plain("tbl_matmul", "naive", Cost{2'000'000'000, 1'000'000'000, 12'000'000});
  busy_wait_ns(200'000);
  close_op(mm);
  close_op(open_plain("tbl_add", "optimized", Cost{1000, 0, 12000}));
  PhaseGuard backward(Phase::backward);
  {
    GradOfGuard g("tbl_matmul.dA");
    int32_t da = open_plain("tbl_matmul", "naive", Cost{2'000'000'000, 1'000'000'000, 0});
    busy_wait_ns(100'000);
    close_op(da);
  }
  return session.stop();
}

TEST_CASE("format_table lists the ops with units, grad_of labels and the meta footer") {
  Session session;
  const Profile& p = sample_profile(session);
  const std::string t = format_table(p);
  INFO(t);

  CHECK(t.find("wall") != std::string::npos);
  CHECK(t.find("tbl_add") != std::string::npos);
  CHECK(t.find("tbl_matmul  (tbl_matmul.dA)") != std::string::npos);
  CHECK(t.find("GFLOP/s") != std::string::npos);
  CHECK(t.find("GB/s") != std::string::npos);
  CHECK(t.find("alloc") != std::string::npos);
  CHECK(t.find(" GFLOP ") != std::string::npos);  // 4 GFLOP in the largest row picks GFLOP

  // The footer carries the context every number needs.
  CHECK(t.find(p.meta.version) != std::string::npos);
  CHECK(t.find(p.meta.compiler) != std::string::npos);
  CHECK(t.find(p.meta.clock) != std::string::npos);
  CHECK(t.find("thread") != std::string::npos);
  CHECK(t.find("ns/op") != std::string::npos);
  CHECK(t.find("multiply-add as 2") != std::string::npos);
  CHECK(t.find("minimum traffic") != std::string::npos);

  // Rows sorted by self time: the 200 us forward matmul comes before the add.
  CHECK(t.find("tbl_matmul ") < t.find("tbl_add"));

  // The matmul row: 2 GFLOP in >= 200 us of self time is at most 10000 GFLOP/s, and the
  // "2.000" GFLOP cell is there.
  const std::vector<std::string> lines = lines_of(t);
  std::string mm_line;
  for (const std::string& l : lines) {
    if (l.rfind("tbl_matmul ", 0) == 0 && l.find("forward") != std::string::npos) mm_line = l;
  }
  REQUIRE_FALSE(mm_line.empty());
  CHECK(mm_line.find("2.000") != std::string::npos);
  CHECK(mm_line.find("naive") != std::string::npos);
}

TEST_CASE("format_table columns line up") {
  Session session;
  const Profile& p = sample_profile(session);
  const std::vector<std::string> lines = lines_of(format_table(p));
  // Header, rule, then the three rows: the rule is as wide as the widest line, and every
  // row ends where the header ends (the last column is right-aligned).
  size_t header = 0;
  while (header < lines.size() && lines[header].rfind("op ", 0) != 0) ++header;
  REQUIRE(header + 4 < lines.size());
  const size_t width = lines[header + 1].size();
  CHECK(lines[header + 1] == std::string(width, '-'));
  CHECK(lines[header].size() == width);
  for (size_t i = header + 2; i < header + 5; ++i) CHECK(lines[i].size() == width);
  // The "calls" column is right-aligned under its header.
  const size_t calls_end = lines[header].find("calls") + 5;
  for (size_t i = header + 2; i < header + 5; ++i) {
    CHECK(lines[i][calls_end - 1] == '1');
    CHECK(lines[i][calls_end] == ' ');
  }
}

TEST_CASE("format_table honours max_rows and show_grad_of") {
  Session session;
  const Profile& p = sample_profile(session);
  TableOptions opts;
  opts.max_rows = 1;
  opts.show_grad_of = false;
  const std::string t = format_table(p, opts);
  INFO(t);
  CHECK(t.find("tbl_add") == std::string::npos);
  CHECK(t.find("(tbl_matmul.dA)") == std::string::npos);
  CHECK(t.find("2 more rows omitted") != std::string::npos);

  opts.max_rows = 0;  // all rows
  const std::string all = format_table(p, opts);
  CHECK(all.find("tbl_add") != std::string::npos);
  CHECK(all.find("omitted") == std::string::npos);
}

TEST_CASE("format_table of an empty profile still prints the footer") {
  Session session;
  const Profile& p = session.stop();
  const std::string t = format_table(p);
  CHECK(t.find("no op records") != std::string::npos);
  CHECK(t.find("ns/op") != std::string::npos);
}

}  // namespace
}  // namespace prism::profiler
