#include "analysis/bench_report.h"

#include <fmt/format.h>

#include "analysis/report_format.h"
#include "nn/data/loader.h"
#include "profiler/counters.h"

namespace prism::analysis {

namespace {

std::string header(const BenchResult& r) {
  const BenchOptions& o = r.options;
  std::string out = fmt::format(
      "bench {} --mode {}: {} parameters, input {} ({}), {} thread{}, device {}, kernels: {}\n",
      o.model, bench_mode_name(o.mode), r.parameters, r.input, o.data ? o.data_name : "synthetic",
      r.fingerprint.threads, r.fingerprint.threads == 1 ? "" : "s", r.fingerprint.device,
      r.kernels.empty() ? "defaults" : r.kernels);
  out += fmt::format(
      "resident before any work: {} (the binary and its libraries); harness: {:.0f} ns per timed "
      "call; profiler: off while timing, {:.0f} ns per op in the profiled calls\n",
      format_bytes(r.baseline_rss_bytes), r.harness_ns, r.profiler_overhead_ns);
  if (o.precision == "bf16") {
    out +=
        "precision bf16: matmuls and convolutions in bfloat16 with float32 sums (autocast); "
        "float32 master weights, softmax, norms and losses\n";
  }
  if (r.weight_bytes > 0) {
    out +=
        fmt::format("precision int8 ({}): weights {} against {} in fp32 ({:.2f}x smaller)\n",
                    r.int8_source, format_bytes(r.weight_bytes), format_bytes(r.fp32_weight_bytes),
                    static_cast<double>(r.fp32_weight_bytes) / r.weight_bytes);
  }
  return out;
}

std::string latency_table(const BenchResult& r) {
  TextColumns t({"batch", "calls", "cold", "p50", "p90", "p95", "p99", "max", "mean", "samples/s",
                 "GFLOP/s", "% peak"});
  for (const BatchResult& b : r.batches) {
    const LatencyStats& l = b.latency;
    t.add({std::to_string(b.batch), std::to_string(l.n), format_ns(b.cold_ns), format_ns(l.p50),
           format_ns(l.p90), format_ns(l.p95), format_ns(l.p99), format_ns(l.max),
           format_ns(l.mean), fmt::format("{:.1f}", b.throughput), fmt::format("{:.2f}", b.gflops),
           b.pct_peak > 0 ? fmt::format("{:.1f}", b.pct_peak) : "-"});
  }
  std::string out = t.str();
  out += "95% intervals (bootstrap):\n";
  for (const BatchResult& b : r.batches) {
    out +=
        fmt::format("  batch {}: p50 [{}, {}], p99 [{}, {}]{}\n", b.batch,
                    format_ns(b.latency.p50_ci.low), format_ns(b.latency.p50_ci.high),
                    format_ns(b.latency.p99_ci.low), format_ns(b.latency.p99_ci.high),
                    b.latency.n < kMinSamplesForP99 ? " (p99 of few calls: nearly the max)" : "");
  }
  return out;
}

std::string memory_table(const BenchResult& r) {
  std::vector<std::string> headers{"batch", "peak RSS", "tracked peak"};
  for (int i = 0; i < profiler::kNumRoles; ++i) {
    headers.push_back(profiler::role_name(static_cast<profiler::MemRole>(i)));
  }
  headers.push_back("FLOP/sample");
  headers.push_back("allocs/call");
  TextColumns t(headers);
  for (const BatchResult& b : r.batches) {
    std::vector<std::string> row{std::to_string(b.batch), format_bytes(b.peak_rss_bytes),
                                 format_bytes(b.tracked_peak_bytes)};
    for (int64_t v : b.tracked_peak_by_role) row.push_back(format_bytes(v));
    row.push_back(fmt::format("{:.4g}", b.flops_per_sample));
    row.push_back(std::to_string(b.counters.allocs));
    t.add(row);
  }
  return "memory: peak resident set (VmHWM) beside prism's tracked peak, split by role at the "
         "peak\n" +
         t.str();
}

std::string class_table(const BenchResult& r) {
  std::vector<std::string> headers{"batch"};
  for (int i = 0; i < kNumOpClasses; ++i) headers.push_back(op_class_name(static_cast<OpClass>(i)));
  TextColumns t(headers);
  for (const BatchResult& b : r.batches) {
    double total = 0;
    for (double v : b.class_ns) total += v;
    std::vector<std::string> row{std::to_string(b.batch)};
    for (double v : b.class_ns) {
      row.push_back(v > 0 && total > 0 ? fmt::format("{:.1f}%", 100 * v / total) : "-");
    }
    t.add(row);
  }
  return "time by op class (share of the op time in the profiled calls)\n" + t.str();
}

// The bottleneck map of each batch size's profiled window (analysis/bottleneck.h).
std::string bottleneck_maps(const BenchResult& r) {
  std::string out;
  for (const BatchResult& b : r.batches) {
    out += fmt::format("\nbatch {}: ", b.batch) + format_bottleneck(b.bottleneck, 8);
  }
  return out;
}

// --counters: event counts per model call for each batch size, then the ops of the largest batch
// that take most of its time, with the same figures (profiler/counters.h). Ratios a learner can
// compare across sizes: IPC (instructions per cycle), cache misses per 1000 FLOPs, branch misses
// per 100 branches; page faults and context switches per call.
struct EventFigures {
  uint8_t mask;
  const double* v;  // per call, profiler::Counter order
  double flops;     // per call
};

std::vector<std::string> event_headers(uint8_t mask) {
  using profiler::Counter;
  using profiler::counter_bit;
  std::vector<std::string> h;
  auto has = [mask](Counter c) { return (mask & counter_bit(c)) != 0; };
  if (has(Counter::cycles) && has(Counter::instructions)) h.push_back("IPC");
  if (has(Counter::cache_misses)) h.insert(h.end(), {"cache miss/call", "miss/kFLOP"});
  if (has(Counter::branches) && has(Counter::branch_misses)) h.push_back("br miss %");
  if (has(Counter::page_faults)) h.push_back("page faults/call");
  if (has(Counter::context_switches)) h.push_back("ctx sw/call");
  return h;
}

std::vector<std::string> event_cells(const EventFigures& f) {
  using profiler::Counter;
  using profiler::counter_bit;
  auto has = [&f](Counter c) { return (f.mask & counter_bit(c)) != 0; };
  auto get = [&f](Counter c) { return f.v[static_cast<int>(c)]; };
  auto ratio = [](double num, double den, int decimals) {
    return den > 0 ? fmt::format("{:.{}f}", num / den, decimals) : std::string("-");
  };
  std::vector<std::string> c;
  if (has(Counter::cycles) && has(Counter::instructions)) {
    c.push_back(ratio(get(Counter::instructions), get(Counter::cycles), 2));
  }
  if (has(Counter::cache_misses)) {
    c.push_back(fmt::format("{:.1f}", get(Counter::cache_misses)));
    c.push_back(ratio(1000 * get(Counter::cache_misses), f.flops, 3));
  }
  if (has(Counter::branches) && has(Counter::branch_misses)) {
    c.push_back(ratio(100 * get(Counter::branch_misses), get(Counter::branches), 2));
  }
  if (has(Counter::page_faults)) c.push_back(fmt::format("{:.1f}", get(Counter::page_faults)));
  if (has(Counter::context_switches)) {
    c.push_back(fmt::format("{:.1f}", get(Counter::context_switches)));
  }
  return c;
}

std::string event_table(const BenchResult& r) {
  const uint8_t mask = r.counters.mask;
  std::string out = "event counters per call (profiled calls)\n";
  const std::vector<std::string> figures = event_headers(mask);
  if (!figures.empty()) {
    std::vector<std::string> headers{"batch"};
    headers.insert(headers.end(), figures.begin(), figures.end());
    TextColumns t(headers);
    for (const BatchResult& b : r.batches) {
      std::vector<std::string> row{std::to_string(b.batch)};
      // The columns are those of the result's mask, so every row has one cell per header.
      const std::vector<std::string> cells =
          event_cells({mask, b.events, static_cast<double>(b.counters.flops)});
      row.insert(row.end(), cells.begin(), cells.end());
      t.add(row);
    }
    out += t.str();
    // The largest batch's top ops by self time (ops are sorted so): where the counts come from.
    const BatchResult& big = r.batches.back();
    std::vector<std::string> op_headers{fmt::format("batch {}: op", big.batch), "phase"};
    op_headers.insert(op_headers.end(), figures.begin(), figures.end());
    TextColumns ops(op_headers);
    for (size_t i = 0; i < big.ops.size() && i < 8; ++i) {
      const OpPerCall& op = big.ops[i];
      std::vector<std::string> row{op.name + (op.grad_of.empty() ? "" : " (" + op.grad_of + ")"),
                                   op.phase};
      const std::vector<std::string> cells = event_cells({mask, op.events, op.flops});
      if (op.event_mask == 0) {
        row.insert(row.end(), figures.size(), "-");  // not counted (another thread's op)
      } else {
        row.insert(row.end(), cells.begin(), cells.end());
      }
      ops.add(row);
    }
    out += ops.str();
  }
  return out + profiler::counters_line(r.counters);
}

std::string server_table(const BenchResult& r) {
  const BenchOptions& o = r.options;
  std::string out = fmt::format(
      "server: Poisson arrivals for {:g} s per rate, one worker, batches of up to {} formed "
      "within {:g} ms\n",
      o.server.duration_s, o.server.max_batch, o.server.max_wait_ms);
  TextColumns t({"offered/s", "achieved/s", "completed", "unfinished", "mean batch", "p50", "p95",
                 "p99", "max", "queue p50", "queue p99"});
  for (const ServerPoint& p : r.server) {
    const bool any = !p.run.latency_ns.empty();
    auto lat = [any](double v) { return any ? format_ns(v) : std::string("-"); };
    t.add({fmt::format("{:g}", p.run.offered_qps), fmt::format("{:.1f}", p.run.achieved_qps),
           std::to_string(p.run.completed), std::to_string(p.run.unfinished),
           fmt::format("{:.2f}", p.run.mean_batch()), lat(p.latency.p50), lat(p.latency.p95),
           lat(p.latency.p99), lat(p.latency.max), lat(p.queue_wait.p50), lat(p.queue_wait.p99)});
  }
  out += t.str();
  out += "batch sizes formed:";
  for (const ServerPoint& p : r.server) {
    out += fmt::format("  {:g}/s:", p.run.offered_qps);
    for (const auto& [size, count] : p.run.batch_sizes) out += fmt::format(" {}x{}", count, size);
  }
  out += "\n";
  out += slo_crossing(r.server, o.slo_ms);
  return out;
}

}  // namespace

std::string slo_crossing(const std::vector<ServerPoint>& points, double slo_ms) {
  if (slo_ms <= 0 || points.empty()) return "";
  const double slo_ns = slo_ms * 1e6;
  auto p99_or_inf = [](const ServerPoint& p) {
    // Unfinished requests waited at least as long as the run: the tail is unbounded.
    return p.run.latency_ns.empty() || p.run.unfinished > 0 ? 1e300 : p.latency.p99;
  };
  const ServerPoint* last_ok = nullptr;
  for (const ServerPoint& p : points) {
    if (p99_or_inf(p) > slo_ns) {
      if (!last_ok) {
        return fmt::format("SLO p99 <= {:g} ms: missed already at the lowest rate, {:g}/s\n",
                           slo_ms, p.run.offered_qps);
      }
      return fmt::format(
          "SLO p99 <= {:g} ms: met up to {:g}/s (p99 {}), missed from {:g}/s (p99 {}): the knee "
          "lies between\n",
          slo_ms, last_ok->run.offered_qps, format_ns(last_ok->latency.p99), p.run.offered_qps,
          p.run.latency_ns.empty()
              ? "-"
              : format_ns(p.latency.p99) + (p.run.unfinished ? ", with unfinished requests" : ""));
    }
    last_ok = &p;
  }
  return fmt::format("SLO p99 <= {:g} ms: met at every rate up to {:g}/s\n", slo_ms,
                     points.back().run.offered_qps);
}

std::string format_bench(const BenchResult& r) {
  std::string out = header(r);
  if (!r.batches.empty()) {
    out += "\n" + latency_table(r) + "\n" + memory_table(r) + "\n" + class_table(r);
    out += bottleneck_maps(r);
    if (r.counters.enabled) out += "\n" + event_table(r);
  }
  if (!r.server.empty()) out += "\n" + server_table(r);
  out += warnings_section(r.environment);
  return out;
}

std::string format_pipeline(const PipelineResult& r) {
  const BenchOptions& o = r.options;
  std::string out = fmt::format(
      "bench {} --model-off: the input pipeline alone, on {} ({} examples): `prism train`'s "
      "DataLoader (shuffled, full batches, {} batches prefetched by one worker) feeding the sum "
      "of each batch instead of the model; {} thread{}\n",
      o.model, o.data_name, r.examples, nn::data::DataLoader::kPrefetchDepth, r.fingerprint.threads,
      r.fingerprint.threads == 1 ? "" : "s");
  TextColumns t({"batch", "batches", "p50/batch", "p99/batch", "batches/s", "samples/s",
                 fmt::format("model {} samples/s", bench_mode_name(o.mode)), "loader/model"});
  for (const PipelinePoint& p : r.points) {
    t.add({std::to_string(p.batch), std::to_string(p.latency.n), format_ns(p.latency.p50),
           format_ns(p.latency.p99), fmt::format("{:.1f}", p.batches_per_s),
           fmt::format("{:.0f}", p.samples_per_s), fmt::format("{:.0f}", p.model_samples_per_s),
           p.model_samples_per_s > 0
               ? fmt::format("{:.2f}x", p.samples_per_s / p.model_samples_per_s)
               : "-"});
  }
  out += "\n" + t.str() + "\n";
  for (const PipelinePoint& p : r.points) out += pipeline_verdict(p, o.mode);
  out += warnings_section(r.environment);
  return out;
}

}  // namespace prism::analysis
