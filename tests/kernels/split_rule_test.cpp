// The split rule: the work each thread must bring, from a machine's region cost
// (kernels/split_rule.h), and how threads_for and threads_for_macs (kernels/cpu/parallel.h)
// apply it. tests/ops/determinism_test.cpp checks that the bits do not depend on it.
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <limits>

#include "kernels/cpu/parallel.h"
#include "kernels/split_rule.h"
#include "profiler/aggregate.h"
#include "profiler/session.h"
#include "tensor/ops.h"

namespace prism::kernels::cpu {
namespace {

// Installs region costs and OpenMP's thread count for a scope; restores both after.
class Rule {
 public:
  Rule(const std::vector<double>& micros, int threads) : saved_(omp_get_max_threads()) {
    set_region_costs(micros);
    omp_set_num_threads(threads);
  }
  ~Rule() {
    set_region_costs({});
    omp_set_num_threads(saved_);
  }
  Rule(const Rule&) = delete;
  Rule& operator=(const Rule&) = delete;

 private:
  int saved_;
};

TEST_CASE("split rule: the scale is the region cost over the reference, rounded up, at least 1") {
  const double ref = kReferenceRegionMicros;
  CHECK(work_scale_for(0) == 1);
  CHECK(work_scale_for(-3) == 1);
  CHECK(work_scale_for(0.5 * ref) == 1);  // a cheaper region does not shrink the chunks
  CHECK(work_scale_for(ref) == 1);
  CHECK(work_scale_for(1.01 * ref) == 2);
  CHECK(work_scale_for(4 * ref) == 4);
  CHECK(work_scale_for(9.5 * ref) == 10);
  CHECK(work_scale_for(std::numeric_limits<double>::quiet_NaN()) == 1);
  CHECK(work_scale_for(std::numeric_limits<double>::infinity()) == 1);
  CHECK(work_scale_for(1e300) == static_cast<int64_t>(std::ceil(1e6 / ref)));  // finite
}

TEST_CASE("split rule: installed per thread count, the last measured one for more threads") {
  const double ref = kReferenceRegionMicros;
  {
    Rule rule({2 * ref, 0, 7.5 * ref}, 2);  // R(2), R(3) not measured, R(4)
    CHECK(work_scale(2) == 2);
    CHECK(region_cost_micros(2) == doctest::Approx(2 * ref));
    CHECK(work_scale(3) == 1);
    CHECK(region_cost_micros(3) == doctest::Approx(ref));
    CHECK(work_scale(4) == 8);
    CHECK(work_scale(64) == 8);
    CHECK(work_scale(100000) == 8);
    CHECK(work_scale(1) == 1);  // no region at 1 thread
    CHECK(work_scale(0) == 1);
  }
  // Restored: the reference everywhere.
  CHECK(work_scale(2) == 1);
  CHECK(work_scale(4) == 1);
  CHECK(region_cost_micros(2) == doctest::Approx(ref));
}

TEST_CASE("split rule: threads_for gives each thread work_scale chunks") {
  {
    Rule rule({}, 2);
    CHECK(threads_for(1) == 1);
    CHECK(threads_for(2) == 2);
  }
  {
    Rule rule({10 * kReferenceRegionMicros}, 2);
    CHECK(threads_for(2) == 1);
    CHECK(threads_for(19) == 1);
    CHECK(threads_for(20) == 2);
    CHECK(threads_for(20, 1) == 1);  // a kernel's own cap still holds
  }
  {
    Rule rule({kReferenceRegionMicros, 3 * kReferenceRegionMicros}, 3);  // R(3) = 3x
    CHECK(threads_for(8) == 2);  // 3 threads would need 9 chunks; 2 need 2
    CHECK(threads_for(9) == 3);
  }
}

TEST_CASE("split rule: threads_for_macs scales a product's thresholds") {
  const int64_t first = kParallelGemmMacs, per = kGemmMacsPerThread;
  {
    Rule rule({}, 2);
    CHECK(threads_for_macs(first - 1, first, per) == 1);
    CHECK(threads_for_macs(first, first, per) == 2);
  }
  {
    Rule rule({3 * kReferenceRegionMicros}, 2);
    CHECK(threads_for_macs(first, first, per) == 1);
    CHECK(threads_for_macs(3 * first - 1, first, per) == 1);
    CHECK(threads_for_macs(3 * first, first, per) == 2);
  }
  {
    Rule rule({}, 4);
    CHECK(threads_for_macs(first, first, per) == 2);  // 2 threads' worth of per
    CHECK(threads_for_macs(4 * per, first, per) == 4);
  }
}

TEST_CASE("a small op stays on one thread: a region would cost more than the work") {
  Rule rule({}, 2);  // the default region costs
  profiler::Session session;
  prism::gelu(prism::ones({64}));
  const profiler::Profile& p = session.stop();
  const std::vector<profiler::OpRow> rows = profiler::aggregate_ops(p);
  REQUIRE(rows.size() == 2);  // ones and gelu
  for (const profiler::OpRow& row : rows) {
    CHECK(row.threads_min == 1);
    CHECK(row.threads_max == 1);
  }
}

}  // namespace
}  // namespace prism::kernels::cpu
