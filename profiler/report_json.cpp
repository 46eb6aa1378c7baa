// Machine-readable profile: the aggregated rows plus the context needed to trust them.
//
// Numbers stay raw (ns, FLOPs, bytes) so tools never have to undo a unit choice; the table is
// the place for human units.
#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profiler/counters_json.h"
#include "profiler/memory.h"
#include "profiler/meta_json.h"
#include "profiler/reports.h"

namespace prism::profiler {

namespace {

// ordered_json keeps keys in the order written (meta first, name before numbers), for people
// reading the file; parsers do not care.
using json = nlohmann::ordered_json;

const char* device_label(int32_t device) {
  switch (device) {
    case 0:
      return "cpu";
    case 1:
      return "cuda";
    case 2:
      return "meta";
    default:
      return "other";
  }
}

json row_json(const OpRow& r) {
  return json{{"name", r.name},
              {"phase", phase_name(r.phase)},
              {"variant", r.variant},
              {"grad_of", r.grad_of},
              {"device", r.device},
              {"calls", r.calls},
              {"time_ns", r.total_ns},
              {"self_ns", r.self_ns},
              {"gpu_ns", r.gpu_ns},
              {"flops", r.cost.flops},
              {"macs", r.cost.macs},
              {"bytes", r.cost.bytes},
              {"allocs", r.allocs},
              {"alloc_bytes", r.alloc_bytes},
              {"threads_min", r.threads_min},
              {"threads_max", r.threads_max}};
}

// Live bytes over the recording, for a memory timeline (prism report): one point per alloc or
// free, {t_ns since the recording started, live_bytes, device, roles: {role: live bytes}, op},
// in time order; `op` is the op that allocated or freed ("" outside every op). A role's level
// starts at what it held when the session started and follows its samples. Each device's
// samples are thinned to at most kTimelinePoints: cut into that many runs of equal count, each
// run keeping its highest point, so the curve is the upper envelope and the peak survives.
constexpr size_t kTimelinePoints = 8192;

struct TimelinePoint {
  MemSample sample;
  std::array<int64_t, kNumRoles> roles;  // every role's live bytes after the sample
};

json memory_timeline_json(const Recording& rec) {
  std::vector<TimelinePoint> kept;
  for (int32_t d = 0; d < kNumDevices; ++d) {
    std::vector<MemSample> s;
    for (const MemSample& m : rec.memory) {
      if (m.device == d) s.push_back(m);
    }
    std::stable_sort(s.begin(), s.end(),
                     [](const MemSample& a, const MemSample& b) { return a.t_ns < b.t_ns; });
    std::vector<TimelinePoint> all;
    std::array<int64_t, kNumRoles> level = rec.start_live_by_role[static_cast<size_t>(d)];
    for (const MemSample& m : s) {
      if (m.role >= 0 && m.role < kNumRoles) level[static_cast<size_t>(m.role)] = m.role_bytes;
      all.push_back({m, level});
    }
    const size_t runs = std::min(all.size(), kTimelinePoints);
    for (size_t r = 0; r < runs; ++r) {
      const size_t lo = r * all.size() / runs, hi = (r + 1) * all.size() / runs;
      size_t best = lo;
      for (size_t i = lo + 1; i < hi; ++i) {
        if (all[i].sample.live_bytes > all[best].sample.live_bytes) best = i;
      }
      kept.push_back(all[best]);
    }
  }
  std::stable_sort(kept.begin(), kept.end(), [](const TimelinePoint& a, const TimelinePoint& b) {
    return a.sample.t_ns < b.sample.t_ns;
  });
  json out = json::array();
  for (const TimelinePoint& p : kept) {
    json roles = json::object();
    for (int r = 0; r < kNumRoles; ++r) {
      if (p.roles[static_cast<size_t>(r)] != 0) {
        roles[role_name(static_cast<MemRole>(r))] = p.roles[static_cast<size_t>(r)];
      }
    }
    out.push_back(json{{"t_ns", p.sample.t_ns - rec.start_ns},
                       {"live_bytes", p.sample.live_bytes},
                       {"device", device_label(p.sample.device)},
                       {"roles", roles},
                       {"op", p.sample.op ? p.sample.op : ""}});
  }
  return out;
}

// The highest live bytes seen at any alloc or free during the recording, per device. Bytes
// that were live before the session started count too: this is what the process held.
json memory_json(const Recording& rec) {
  std::map<std::string, int64_t> peak;
  for (int d = 0; d < kNumDevices; ++d) peak[device_label(d)] = 0;
  for (const MemSample& m : rec.memory) {
    int64_t& p = peak[device_label(m.device)];
    p = std::max(p, m.live_bytes);
  }
  return json{{"peak_live_bytes", peak},
              {"samples", rec.memory.size()},
              {"timeline", memory_timeline_json(rec)}};
}

// The module tree (aggregate_scopes, the rows format_tree prints): one entry per scope path,
// parents before children, each covering its subtree; backward and optimizer work count for the
// module whose forward made them. Time is op self time, so the depth-1 rows plus the "" row
// (ops outside every scope, depth 0) add up to totals.op_self_ns.
json modules_json(const Profile& p) {
  json out = json::array();
  for (const ScopeRow& r : aggregate_scopes(p)) {
    out.push_back(json{{"path", r.path},
                       {"name", r.name},
                       {"depth", r.depth},
                       {"calls", r.calls},
                       {"fwd_ns", r.self_ns[0]},
                       {"bwd_ns", r.self_ns[1]},
                       {"opt_ns", r.self_ns[2]},
                       {"rec_ns", r.self_ns[3]},   // recompute (activation checkpointing)
                       {"comm_ns", r.self_ns[4]},  // communication (data-parallel sync)
                       {"fwd_flops", r.cost[0].flops},
                       {"bwd_flops", r.cost[1].flops},
                       {"rec_flops", r.cost[3].flops},
                       {"allocs", r.allocs},
                       {"alloc_bytes", r.alloc_bytes},
                       {"output_shape", r.output_shape}});
  }
  return out;
}

// The collectives table's rows (aggregate_collectives): raw bytes and ns, bandwidths in GB/s
// (1e9 bytes per second) as collective.h defines them.
json collectives_json(const Profile& p) {
  json out = json::array();
  for (const CollectiveRow& r : aggregate_collectives(p)) {
    out.push_back(json{{"op", r.op},
                       {"world_size", r.world_size},
                       {"calls", r.calls},
                       {"bytes", r.bytes},
                       {"time_ns", r.total_ns},
                       {"median_ns", r.median_ns},
                       {"algbw_gbs", r.algbw_gbs},
                       {"busbw_gbs", r.busbw_gbs}});
  }
  return out;
}

}  // namespace

std::string profile_json(const Profile& p) {
  json meta = meta_json(p);

  json ops = json::array();
  Cost total;
  for (const OpRow& r : aggregate_ops(p)) {
    json row = row_json(r);
    if (p.counters.enabled) {
      // Self counts summed over the counted calls (the session thread's), like self_ns.
      row["counters"] = counter_values_json<json>(r.counters, r.counters.mask);
      row["counters"]["counted_calls"] = r.counted_calls;
    }
    ops.push_back(std::move(row));
    total += r.cost;
  }

  json doc{{"meta", std::move(meta)},
           {"ops", std::move(ops)},
           {"memory", memory_json(p.recording)},
           {"modules", modules_json(p)},
           {"totals",
            {{"op_self_ns", total_op_self_ns(p)},
             {"flops", total.flops},
             {"macs", total.macs},
             {"bytes", total.bytes}}}};
  doc["collectives"] = collectives_json(p);
  if (p.counters.enabled) doc["counters"] = counter_info_json<json>(p.counters);
  return doc.dump(2);
}

}  // namespace prism::profiler
