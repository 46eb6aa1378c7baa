// The server scenario against queues whose answers are known by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "analysis/server.h"

using namespace prism::analysis;

namespace {

// A clock that moves only when told: sleeping jumps to the wake-up time, and each batch takes
// exactly `service_ns(n)`.
class SimClock : public ServerClock {
 public:
  int64_t now_ns() override { return t_; }
  void sleep_until(int64_t t) override { t_ = std::max(t_, t); }
  void advance(int64_t d) { t_ += d; }

 private:
  int64_t t_ = 1'000;  // not zero: arrivals are relative to the start
};

constexpr int64_t kMs = 1'000'000;

}  // namespace

TEST_CASE("server: one request at a time, idle between arrivals: latency is the service time") {
  ServerOptions o;
  o.qps = 100;  // every 10 ms
  o.poisson = false;
  o.max_batch = 1;
  o.max_wait_ms = 0;
  o.duration_s = 1;
  SimClock clock;
  const ServerResult r = run_server(
      o, [&](int) { clock.advance(1 * kMs); }, clock);
  CHECK(r.arrived == 100);
  CHECK(r.completed == 100);
  CHECK(r.unfinished == 0);
  for (double l : r.latency_ns) CHECK(l == doctest::Approx(1e6));
  for (double w : r.queue_wait_ns) CHECK(w == 0);
  CHECK(r.batch_sizes.size() == 1);
  CHECK(r.batch_sizes.at(1) == 100);
  // The last request arrives at 990 ms and is done at 991 ms.
  CHECK(r.achieved_qps == doctest::Approx(100 / 0.991));
}

TEST_CASE("server: batches fill to max_batch before the wait runs out (worked by hand)") {
  // Arrivals every 1 ms, batches of 4, wait up to 5 ms, a batch takes 2 ms. The worker starts
  // at 0 with one request, sleeps until the 4th arrives (3 ms), serves 0..3 until 5 ms; then
  // 4..7 fill at 7 ms and are done at 9 ms; and so on: latencies 5, 4, 3, 2 ms in every batch.
  ServerOptions o;
  o.qps = 1000;
  o.poisson = false;
  o.max_batch = 4;
  o.max_wait_ms = 5;
  o.duration_s = 0.04;  // 40 requests
  SimClock clock;
  const ServerResult r = run_server(
      o, [&](int) { clock.advance(2 * kMs); }, clock);
  REQUIRE(r.completed == 40);
  CHECK(r.batch_sizes.at(4) == 10);
  CHECK(r.mean_batch() == 4);
  for (size_t i = 0; i < r.latency_ns.size(); ++i) {
    CHECK(r.latency_ns[i] == doctest::Approx((5 - static_cast<double>(i % 4)) * 1e6));
    CHECK(r.queue_wait_ns[i] == doctest::Approx((3 - static_cast<double>(i % 4)) * 1e6));
  }
}

TEST_CASE("server: the oldest request's wait runs out before the batch fills") {
  // Arrivals every 10 ms, batches of 8, wait at most 2 ms: every batch holds one request that
  // waited the full 2 ms, then 1 ms of service.
  ServerOptions o;
  o.qps = 100;
  o.poisson = false;
  o.max_batch = 8;
  o.max_wait_ms = 2;
  o.duration_s = 0.1;
  SimClock clock;
  const ServerResult r = run_server(
      o, [&](int) { clock.advance(1 * kMs); }, clock);
  REQUIRE(r.completed == 10);
  CHECK(r.batch_sizes.at(1) == 10);
  for (double l : r.latency_ns) CHECK(l == doctest::Approx(3e6));
}

TEST_CASE("server: an overloaded worker leaves requests unfinished and its queue grows") {
  // 1000 requests/s, one at a time at 2 ms each: the worker serves 500/s.
  ServerOptions o;
  o.qps = 1000;
  o.poisson = false;
  o.max_batch = 1;
  o.max_wait_ms = 0;
  o.duration_s = 1;
  o.drain_s = 0;
  SimClock clock;
  const ServerResult r = run_server(
      o, [&](int) { clock.advance(2 * kMs); }, clock);
  CHECK(r.arrived == 1000);
  CHECK(r.completed == 500);
  CHECK(r.unfinished == 500);
  CHECK(r.achieved_qps == doctest::Approx(500).epsilon(0.01));
  // Request i waits for the i requests before it: latency grows linearly, 2 (i + 1) - i ms.
  CHECK(r.latency_ns.back() == doctest::Approx((2.0 * 500 - 499) * 1e6));
}

TEST_CASE("server: Poisson arrivals have the asked rate, are seeded, and exponential gaps") {
  ServerOptions o;
  o.qps = 2000;
  o.duration_s = 50;
  const std::vector<int64_t> t = arrival_times(o);
  CHECK(static_cast<double>(t.size()) == doctest::Approx(100'000).epsilon(0.02));
  CHECK(arrival_times(o) == t);
  o.seed = 2;
  CHECK(arrival_times(o) != t);
  // For exponential gaps the standard deviation equals the mean.
  double sum = 0, sq = 0;
  for (size_t i = 1; i < t.size(); ++i) {
    const double g = static_cast<double>(t[i] - t[i - 1]);
    sum += g;
    sq += g * g;
  }
  const double n = static_cast<double>(t.size() - 1), mean = sum / n;
  CHECK(mean == doctest::Approx(5e5).epsilon(0.02));
  CHECK(std::sqrt(sq / n - mean * mean) == doctest::Approx(mean).epsilon(0.03));
}

TEST_CASE("server: bad options are errors naming the option") {
  ServerOptions o;
  o.qps = 0;
  CHECK_THROWS_WITH_AS(arrival_times(o), doctest::Contains("rate"), std::invalid_argument);
  o.qps = 10;
  o.max_batch = 0;
  CHECK_THROWS_WITH_AS(arrival_times(o), doctest::Contains("batch"), std::invalid_argument);
  o.max_batch = 1;
  o.qps = 1e9;
  o.duration_s = 100;
  CHECK_THROWS_WITH_AS(arrival_times(o), doctest::Contains("10 million"), std::invalid_argument);
}
