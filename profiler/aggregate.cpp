// Folding op records into table rows.
//
// Self time is what an op spent outside the ops nested inside it: a composite op that calls
// matmul and add should not be blamed for their time twice. A record's time is subtracted from
// its nearest enclosing *op*, looking through scope records in between (op > scope > op is rare,
// but the inner op's time still belongs to the inner op). Summing self time over all ops then
// counts every nanosecond spent inside ops exactly once. Event counts (counters.h) follow the
// same rule, so a composite op is not charged for its children's cache misses either.
#include <algorithm>
#include <functional>
#include <map>
#include <string_view>
#include <tuple>
#include <vector>

#include "profiler/aggregate.h"

namespace prism::profiler {

namespace {

// Index of the closest enclosing op record of records[i], or -1 when only scopes (or nothing)
// enclose it.
int32_t enclosing_op(const std::vector<OpRecord>& records, size_t i) {
  int32_t p = records[i].parent;
  while (p >= 0 && records[static_cast<size_t>(p)].kind != Kind::op) {
    p = records[static_cast<size_t>(p)].parent;
  }
  return p;
}

// Self time of every record (0 for scopes, whose time is not op time).
std::vector<int64_t> self_times(const std::vector<OpRecord>& records) {
  std::vector<int64_t> self(records.size(), 0);
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].kind == Kind::op) self[i] += records[i].dur_ns;
  }
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].kind != Kind::op) continue;
    int32_t p = enclosing_op(records, i);
    if (p >= 0) self[static_cast<size_t>(p)] -= records[i].dur_ns;
  }
  // A child is closed before its parent on the same clock, so self >= 0 already; the clamp
  // only guards against a record cut short by a session stopping mid-op.
  for (int64_t& s : self) s = std::max<int64_t>(s, 0);
  return self;
}

}  // namespace

std::vector<CounterValues> record_self_counters(const std::vector<OpRecord>& records) {
  std::vector<CounterValues> self(records.size());
  bool any = false;
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].kind != Kind::op) continue;
    self[i] = records[i].counters;
    any = any || self[i].any();
  }
  if (!any) return self;
  // As with time: an op's inclusive counts minus those of the ops directly inside it. A count
  // can come out slightly negative (a child's two reads bracket a little more than the parent
  // saw of it); the clamp keeps reports from showing a negative number of misses.
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].kind != Kind::op || !records[i].counters.any()) continue;
    const int32_t p = enclosing_op(records, i);
    if (p >= 0) subtract_counts(self[static_cast<size_t>(p)], records[i].counters);
  }
  for (CounterValues& c : self) {
    for (int64_t& v : c.value) v = std::max<int64_t>(v, 0);
  }
  return self;
}

std::vector<OpRow> aggregate_ops(const Profile& p) {
  const std::vector<OpRecord>& records = p.recording.records;
  const std::vector<int64_t> self = self_times(records);
  const std::vector<CounterValues> self_counts = record_self_counters(records);

  // Labels are compared by content, not pointer: the same literal may live at two addresses
  // in two translation units.
  using Key =
      std::tuple<std::string_view, Phase, std::string_view, std::string_view, std::string_view>;
  std::map<Key, size_t> index;
  std::vector<OpRow> rows;
  for (size_t i = 0; i < records.size(); ++i) {
    const OpRecord& r = records[i];
    if (r.kind != Kind::op) continue;
    Key key{r.op, r.phase, r.variant, r.grad_of, r.device};
    auto [it, inserted] = index.try_emplace(key, rows.size());
    if (inserted) {
      OpRow row;
      row.name = r.op;
      row.phase = r.phase;
      row.variant = r.variant;
      row.grad_of = r.grad_of;
      row.device = r.device;
      rows.push_back(std::move(row));
    }
    OpRow& row = rows[it->second];
    row.calls += 1;
    row.total_ns += r.dur_ns;
    row.self_ns += self[i];
    if (r.gpu_ns >= 0) row.gpu_ns = std::max<int64_t>(row.gpu_ns, 0) + r.gpu_ns;
    row.cost += r.cost;
    row.allocs += r.allocs;
    row.alloc_bytes += r.alloc_bytes;
    row.threads_min = row.calls == 1 ? r.threads : std::min(row.threads_min, r.threads);
    row.threads_max = std::max(row.threads_max, r.threads);
    if (self_counts[i].any()) {
      add_counts(row.counters, self_counts[i]);
      row.counted_calls += 1;
    }
  }

  // Largest self time first; ties broken by name so the order is reproducible.
  std::stable_sort(rows.begin(), rows.end(), [](const OpRow& a, const OpRow& b) {
    if (a.self_ns != b.self_ns) return a.self_ns > b.self_ns;
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    return std::tie(a.name, a.phase, a.variant, a.grad_of, a.device) <
           std::tie(b.name, b.phase, b.variant, b.grad_of, b.device);
  });
  return rows;
}

std::vector<int64_t> record_self_times(const Profile& p) {
  return self_times(p.recording.records);
}

std::vector<ScopeRow> aggregate_scopes(const Profile& p) {
  const std::vector<OpRecord>& records = p.recording.records;
  const std::vector<std::string>& paths = p.recording.scope_paths;
  const std::vector<int64_t> self = self_times(records);

  // Rows by path, created parent-first the first time a path (or a descendant) is seen.
  std::map<std::string, size_t> index;
  std::vector<ScopeRow> rows;
  // A path's chain: "", then each prefix ("model", "model.fc1").
  auto ensure = [&](const std::string& path) {
    std::vector<std::string> chain;
    for (std::string cur = path;;) {
      chain.push_back(cur);
      if (cur.empty()) break;
      size_t dot = cur.rfind('.');
      cur = dot == std::string::npos ? std::string() : cur.substr(0, dot);
    }
    std::vector<size_t> ids;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      auto found = index.find(*it);
      if (found == index.end()) {
        ScopeRow r;
        r.path = *it;
        size_t dot = it->rfind('.');
        r.name = it->empty() ? "(outside scopes)"
                             : (dot == std::string::npos ? *it : it->substr(dot + 1));
        r.depth = it->empty() ? 0 : static_cast<int>(std::count(it->begin(), it->end(), '.')) + 1;
        found = index.emplace(*it, rows.size()).first;
        rows.push_back(std::move(r));
      }
      ids.push_back(found->second);
    }
    return ids;  // root first
  };

  for (size_t i = 0; i < records.size(); ++i) {
    const OpRecord& r = records[i];
    const std::string& path = r.scope >= 0 && static_cast<size_t>(r.scope) < paths.size()
                                  ? paths[static_cast<size_t>(r.scope)]
                                  : paths[0];
    if (r.kind == Kind::scope) {
      // A scope record is tagged with its own path (the Scope enters it before recording).
      std::vector<size_t> ids = ensure(path);
      rows[ids.back()].calls += 1;
      if (r.shapes.count > 0) rows[ids.back()].output_shape = r.shapes.to_string();
      continue;
    }
    const int ph = static_cast<int>(r.phase);
    for (size_t id : ensure(path)) {
      ScopeRow& row = rows[id];
      if (row.path.empty() && !path.empty()) continue;  // the "" row holds only unscoped ops
      row.cost[ph] += r.cost;
      row.self_ns[ph] += self[i];
      row.allocs += r.allocs;
      row.alloc_bytes += r.alloc_bytes;
      row.alloc_bytes_by_phase[ph] += r.alloc_bytes;
    }
  }
  // Order: depth-first from the roots, children in first-seen order.
  std::vector<ScopeRow> ordered;
  std::vector<bool> done(rows.size(), false);
  std::function<void(const std::string&)> visit = [&](const std::string& parent) {
    for (size_t i = 0; i < rows.size(); ++i) {
      if (done[i] || rows[i].path.empty()) continue;
      size_t dot = rows[i].path.rfind('.');
      std::string par = dot == std::string::npos ? std::string() : rows[i].path.substr(0, dot);
      if (par != parent) continue;
      done[i] = true;
      ordered.push_back(rows[i]);
      visit(rows[i].path);
    }
  };
  auto root = index.find("");
  if (root != index.end()) {
    const ScopeRow& r = rows[root->second];
    if (r.time_ns() > 0 || r.allocs > 0) ordered.push_back(r);
  }
  visit("");
  return ordered;
}

int64_t total_op_self_ns(const Profile& p) {
  int64_t total = 0;
  for (int64_t s : self_times(p.recording.records)) total += s;
  return total;
}

}  // namespace prism::profiler
