// The server scenario: requests arrive at random (Poisson) times at a mean rate R, wait in a
// queue, and one worker serves them in dynamically formed batches, as an inference server
// does. A client sees queue wait + compute; the server's owner sees the throughput; the batch
// sizes formed show the trade: at low load the worker serves requests nearly one by one, and
// as the load rises the queue builds, batches grow, throughput rises and so does latency, until
// the arrival rate passes what the worker can serve and the queue grows without bound (the
// knee).
//
// The batching rule (as in Triton's or TF Serving's dynamic batcher): when the worker is free
// and the queue is not empty, it waits until the queue holds `max_batch` requests or the oldest
// has waited `max_wait_ms`, whichever comes first, then serves up to `max_batch` of them in
// arrival order.
//
// Arrivals form an open loop: their times are drawn in advance (exponential gaps of mean 1/R)
// and do not wait for the server, as users do not. A single thread runs the worker against
// that schedule on a clock; with the real clock and a real model the latencies are measured,
// with a simulated clock and a known service time they are exact (the tests use that).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

namespace prism::analysis {

// The time base of a server run. The real one reads the steady clock and sleeps; a simulated
// one advances time by the service times it is told of (tests).
class ServerClock {
 public:
  virtual ~ServerClock() = default;
  virtual int64_t now_ns() = 0;
  // Returns at `t_ns` or later.
  virtual void sleep_until(int64_t t_ns) = 0;
};

class SteadyServerClock : public ServerClock {
 public:
  int64_t now_ns() override;
  void sleep_until(int64_t t_ns) override;
};

struct ServerOptions {
  double qps = 100;        // mean arrival rate R, requests per second (> 0)
  int max_batch = 8;       // largest batch the worker forms (>= 1)
  double max_wait_ms = 2;  // longest the oldest request waits for a batch to fill (>= 0)
  double duration_s = 5;   // requests arrive during this long
  // After the last arrival the worker keeps serving for at most this long; requests still
  // queued then are counted as unfinished (an overloaded server never catches up).
  double drain_s = 5;
  bool poisson = true;  // false: evenly spaced arrivals every 1/R (deterministic, for tests)
  uint64_t seed = 1;
};

// Arrival times in ns from the start, for `o.duration_s` at rate `o.qps` (ascending).
std::vector<int64_t> arrival_times(const ServerOptions& o);

struct ServerResult {
  double offered_qps = 0;   // R
  double achieved_qps = 0;  // completed requests / (time of the last completion)
  int64_t arrived = 0;
  int64_t completed = 0;
  int64_t unfinished = 0;              // still queued when the drain time ran out
  std::vector<double> latency_ns;      // per completed request: completion - arrival
  std::vector<double> queue_wait_ns;   // per completed request: batch start - arrival
  std::vector<double> service_ns;      // per batch: its compute time
  std::map<int, int64_t> batch_sizes;  // batch size -> batches of that size
  double mean_batch() const;
};

// Runs the scenario: `serve(n)` computes one batch of n requests (it blocks for as long as
// that takes on `clock`). Arrival times are relative to the clock's time at the call.
ServerResult run_server(const ServerOptions& o, const std::function<void(int)>& serve,
                        ServerClock& clock);

// Checks the options (positive rate, batch >= 1, ...); throws std::invalid_argument naming the
// bad one.
void check_server_options(const ServerOptions& o);

}  // namespace prism::analysis
