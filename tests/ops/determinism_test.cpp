// Every CPU op class at sizes past its grain (kernels/cpu/parallel.h), so its kernel really
// splits the work (the cases are in the op folders' drivers.cpp, tests/ops/drivers.h): the
// outputs and gradients are bit-identical at 1 thread, at 2, and again at 2 (chunks are fixed by
// the shapes, never by the thread count), and the profiler records the threads each op ran on.
// `make tsan` runs this file under ThreadSanitizer too.
#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "kernels/split_rule.h"
#include "profiler/aggregate.h"
#include "profiler/session.h"
#include "tensor/ops.h"
#include "tests/ops/drivers.h"
#include "tests/ops/per_op.h"

namespace prism {
namespace {

// Sets OpenMP's thread count for a scope.
class Threads {
 public:
  explicit Threads(int n) : saved_(omp_get_max_threads()) { omp_set_num_threads(n); }
  ~Threads() { omp_set_num_threads(saved_); }
  Threads(const Threads&) = delete;
  Threads& operator=(const Threads&) = delete;

 private:
  int saved_;
};

using kernels::ThreadCase;
using kernels::ThreadCaseFile;

// The cases of the op folders this run checks (tests/ops/per_op.h), in name order.
const std::vector<ThreadCase>& cases() {
  static const std::vector<ThreadCase> selected = [] {
    std::vector<ThreadCase> c;
    for (ThreadCase& t : ThreadCaseFile::all()) {
      if (testing::folder_selected(t.folder)) c.push_back(std::move(t));
    }
    std::sort(c.begin(), c.end(),
              [](const ThreadCase& a, const ThreadCase& b) { return a.name < b.name; });
    return c;
  }();
  return selected;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  const Tensor ca = contiguous(a), cb = contiguous(b);
  return std::memcmp(ca.data<float>(), cb.data<float>(), static_cast<size_t>(ca.nbytes())) == 0;
}

TEST_CASE("threads: every op class gives the same bits at 1 and 2 threads, run after run") {
  for (const ThreadCase& c : cases()) {
    CAPTURE(c.name);
    std::vector<Tensor> one, two, again;
    {
      Threads t(1);
      one = c.run();
    }
    {
      Threads t(2);
      two = c.run();
      again = c.run();
    }
    REQUIRE(one.size() == two.size());
    for (size_t i = 0; i < one.size(); ++i) {
      CAPTURE(i);
      CHECK(same_bits(one[i], two[i]));
      CHECK(same_bits(two[i], again[i]));
    }
  }
}

TEST_CASE("threads: the profile shows each op's threads past the grain") {
  for (const ThreadCase& c : cases()) {
    CAPTURE(c.name);
    Threads t(2);
    profiler::Session session;
    c.run();
    const profiler::Profile& p = session.stop();
    const std::vector<profiler::OpRow> rows = profiler::aggregate_ops(p);
    for (const std::string& op : c.ops) {
      CAPTURE(op);
      int found = 0;
      for (const profiler::OpRow& row : rows) {
        if (row.name != op) continue;
        ++found;
        CHECK(row.threads_max == 2);
      }
      CHECK(found >= 1);
    }
  }
}

// The split rule (kernels/split_rule.h) on a machine whose regions would cost a second each (the
// rule caps the cost there): every case's calls stay on one thread, and give the bits they give
// at 1 thread.
TEST_CASE("threads: a costly region keeps each case on one thread, with the same bits") {
  struct Restore {
    ~Restore() { kernels::cpu::set_region_costs({}); }
  } restore;
  for (const ThreadCase& c : cases()) {
    CAPTURE(c.name);
    std::vector<Tensor> one;
    {
      Threads t(1);
      one = c.run();
    }
    Threads t(2);
    kernels::cpu::set_region_costs({1e6});
    profiler::Session session;
    const std::vector<Tensor> two = c.run();
    const std::vector<profiler::OpRow> rows = profiler::aggregate_ops(session.stop());
    kernels::cpu::set_region_costs({});
    REQUIRE(one.size() == two.size());
    for (size_t i = 0; i < one.size(); ++i) CHECK(same_bits(one[i], two[i]));
    for (const profiler::OpRow& row : rows) {
      CAPTURE(row.name);
      CHECK(row.threads_max == 1);
    }
  }
}

}  // namespace
}  // namespace prism
