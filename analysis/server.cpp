#include "analysis/server.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>

#include "profiler/clock.h"

namespace prism::analysis {

int64_t SteadyServerClock::now_ns() {
  return profiler::now_ns();
}

void SteadyServerClock::sleep_until(int64_t t_ns) {
  // Sleep most of the way, then spin: the OS may wake a sleeper tens of microseconds late,
  // which would add to every latency at low load.
  constexpr int64_t kSpinNs = 200'000;
  const int64_t now = now_ns();
  if (t_ns - now > kSpinNs) {
    std::this_thread::sleep_for(std::chrono::nanoseconds(t_ns - now - kSpinNs));
  }
  while (now_ns() < t_ns) {
  }
}

void check_server_options(const ServerOptions& o) {
  auto bad = [](const std::string& what) { throw std::invalid_argument("server: " + what); };
  if (!(o.qps > 0) || !std::isfinite(o.qps)) bad("the request rate must be positive");
  if (o.max_batch < 1) bad("the largest batch must be at least 1");
  if (!(o.max_wait_ms >= 0) || !std::isfinite(o.max_wait_ms)) {
    bad("the longest wait must be 0 or more");
  }
  if (!(o.duration_s > 0) || !std::isfinite(o.duration_s)) bad("the duration must be positive");
  if (!(o.drain_s >= 0) || !std::isfinite(o.drain_s)) bad("the drain time must be 0 or more");
  // Requests are kept in memory: refuse a schedule of more than 10 million of them.
  if (o.qps * o.duration_s > 1e7) bad("rate x duration is over 10 million requests");
}

std::vector<int64_t> arrival_times(const ServerOptions& o) {
  check_server_options(o);
  std::vector<int64_t> t;
  const double end_ns = o.duration_s * 1e9;
  const double mean_gap_ns = 1e9 / o.qps;
  if (!o.poisson) {
    for (double x = 0; x < end_ns; x += mean_gap_ns) t.push_back(static_cast<int64_t>(x));
    return t;
  }
  // Exponential gaps by inversion, -mean ln(U) with U uniform in (0, 1], from splitmix64 (the
  // same generator on every platform, so a seed gives the same schedule everywhere).
  uint64_t state = o.seed;
  auto uniform = [&state]() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (static_cast<double>(z >> 11) + 1) * 0x1.0p-53;  // (0, 1]
  };
  for (double x = -mean_gap_ns * std::log(uniform()); x < end_ns;
       x += -mean_gap_ns * std::log(uniform())) {
    t.push_back(static_cast<int64_t>(x));
  }
  return t;
}

double ServerResult::mean_batch() const {
  int64_t batches = 0, requests = 0;
  for (const auto& [size, count] : batch_sizes) {
    batches += count;
    requests += static_cast<int64_t>(size) * count;
  }
  return batches ? static_cast<double>(requests) / static_cast<double>(batches) : 0;
}

ServerResult run_server(const ServerOptions& o, const std::function<void(int)>& serve,
                        ServerClock& clock) {
  const std::vector<int64_t> arrivals = arrival_times(o);
  ServerResult r;
  r.offered_qps = o.qps;
  r.arrived = static_cast<int64_t>(arrivals.size());
  r.latency_ns.reserve(arrivals.size());
  r.queue_wait_ns.reserve(arrivals.size());

  const int64_t t0 = clock.now_ns();
  const int64_t max_wait = static_cast<int64_t>(o.max_wait_ms * 1e6);
  const int64_t stop = static_cast<int64_t>((o.duration_s + o.drain_s) * 1e9);
  const size_t n = arrivals.size();
  size_t next = 0;  // the oldest request not yet served; the queue is [next, arrived by now)
  int64_t last_done = 0;
  while (next < n) {
    int64_t now = clock.now_ns() - t0;
    if (now >= stop) break;
    // Idle: sleep until the next request arrives.
    if (arrivals[next] > now) {
      clock.sleep_until(t0 + arrivals[next]);
      continue;
    }
    // Wait for the batch to fill or the oldest request's wait to run out, whichever comes
    // first. A server cannot know that no more requests will come: near the end of the
    // schedule, where too few remain to fill a batch, it waits out the deadline.
    const size_t full = std::min(n, next + static_cast<size_t>(o.max_batch));
    const int64_t fill_time = next + static_cast<size_t>(o.max_batch) <= n
                                  ? arrivals[full - 1]
                                  : std::numeric_limits<int64_t>::max();
    const int64_t deadline = arrivals[next] + max_wait;
    if (fill_time > now && deadline > now) {
      clock.sleep_until(t0 + std::min(fill_time, deadline));
      now = clock.now_ns() - t0;
    }
    size_t end = next;
    while (end < full && arrivals[end] <= now) ++end;
    const int size = static_cast<int>(end - next);
    const int64_t start = clock.now_ns() - t0;
    serve(size);
    const int64_t done = clock.now_ns() - t0;
    r.service_ns.push_back(static_cast<double>(done - start));
    ++r.batch_sizes[size];
    for (size_t i = next; i < end; ++i) {
      r.latency_ns.push_back(static_cast<double>(done - arrivals[i]));
      r.queue_wait_ns.push_back(static_cast<double>(start - arrivals[i]));
    }
    last_done = done;
    next = end;
  }
  r.completed = static_cast<int64_t>(r.latency_ns.size());
  r.unfinished = r.arrived - r.completed;
  r.achieved_qps = last_done > 0
                       ? static_cast<double>(r.completed) / (static_cast<double>(last_done) * 1e-9)
                       : 0;
  return r;
}

}  // namespace prism::analysis
