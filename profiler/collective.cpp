// Collectives: the bus-bandwidth factors of nccl-tests and the collectives table's rows.
#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "profiler/aggregate.h"
#include "profiler/collective.h"

namespace prism::profiler {

double bus_bandwidth_factor(const char* op, int n) {
  if (n < 1) {
    throw std::invalid_argument("bus_bandwidth_factor: world size " + std::to_string(n) + " < 1");
  }
  const std::string_view o = op ? op : "";
  const double nd = n;
  // A ring allreduce is a reduce-scatter then an all-gather: each rank sends (n - 1)/n of the
  // buffer in each half, 2 (n - 1)/n in all.
  if (o == "allreduce") return 2.0 * (nd - 1.0) / nd;
  // Each rank receives the n - 1 chunks it does not hold (reducescatter, allgather) or sends
  // its n - 1 chunks meant for others (alltoall): (n - 1)/n of S.
  if (o == "reducescatter" || o == "allgather" || o == "alltoall") return (nd - 1.0) / nd;
  // The whole buffer crosses each link once, on the way from (or to) the root: factor 1. So
  // does a point-to-point send/recv; an op nccl-tests does not define gets busbw = algbw too.
  return 1.0;
}

std::vector<CollectiveRow> aggregate_collectives(const Profile& p) {
  std::vector<CollectiveRow> rows;
  std::vector<std::vector<double>> times;  // per row, each call's in-flight ns
  std::map<std::pair<std::string_view, int32_t>, size_t> index;
  for (const CollectiveSpan& c : p.recording.collectives) {
    auto [it, inserted] = index.try_emplace({std::string_view(c.op), c.world_size}, rows.size());
    if (inserted) {
      CollectiveRow r;
      r.op = c.op;
      r.world_size = c.world_size;
      rows.push_back(std::move(r));
      times.emplace_back();
    }
    CollectiveRow& r = rows[it->second];
    const int64_t ns = c.end_ns - c.start_ns;
    r.calls += 1;
    r.bytes += c.bytes;
    r.total_ns += ns;
    times[it->second].push_back(static_cast<double>(ns));
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    CollectiveRow& r = rows[i];
    std::vector<double>& t = times[i];
    std::sort(t.begin(), t.end());
    const size_t n = t.size();
    const double median = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2.0;
    r.median_ns = static_cast<int64_t>(median);
    // Bytes per ns is GB/s.
    r.algbw_gbs =
        r.total_ns > 0 ? static_cast<double>(r.bytes) / static_cast<double>(r.total_ns) : 0.0;
    r.busbw_gbs = r.algbw_gbs * bus_bandwidth_factor(r.op.c_str(), r.world_size);
  }
  return rows;
}

Cost allreduce_cost(int64_t numel, int ranks, int64_t elem_size) {
  if (ranks < 1) {
    throw std::invalid_argument("allreduce_cost: needs at least one rank, got " +
                                std::to_string(ranks));
  }
  Cost c;
  c.flops = numel * (ranks - 1) / ranks;
  c.bytes = numel * elem_size;
  return c;
}

}  // namespace prism::profiler
