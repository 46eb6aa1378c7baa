// prism models: reading the numbers (models_compare.h). Each finding is computed from the
// measured result and quotes the numbers it rests on; none is chosen by a model's name.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "analysis/models_compare.h"
#include "analysis/report_format.h"

namespace prism::analysis {

namespace {

// A model at this share of its roofline ceiling is called limited by that ceiling.
constexpr double kNearRoofPct = 70;

const char* mode_phrase(BenchMode m) {
  return m == BenchMode::train ? "the training step" : "the inference call";
}

// A class "dominates" a mode only with more than half of its time; below that the finding names
// the largest share as what it is, the largest, with the runner-up beside it.
constexpr double kDominantPct = 50;

// "matmul dominates the training step (62.0%)" or "no class dominates the training step: the
// largest share is matmul's, 34.0% (then elementwise 30.1%)".
std::string class_phrase(const ModeResult& m) {
  const OpClass top = dominant_class(m);
  const double share = m.class_share_pct(top);
  if (!(share > 0)) return fmt::format("no op time was profiled in {}", mode_phrase(m.mode));
  if (share > kDominantPct) {
    return fmt::format("{} dominates {} ({:.1f}%)", op_class_name(top), mode_phrase(m.mode), share);
  }
  size_t second = top == static_cast<OpClass>(0) ? 1 : 0;
  for (size_t c = 0; c < m.class_ns.size(); ++c) {
    if (static_cast<OpClass>(c) != top && m.class_ns[c] > m.class_ns[second]) second = c;
  }
  const OpClass next = static_cast<OpClass>(second);
  return fmt::format("no class dominates {}: the largest share is {}'s, {:.1f}% (then {} {:.1f}%)",
                     mode_phrase(m.mode), op_class_name(top), share, op_class_name(next),
                     m.class_share_pct(next));
}

}  // namespace

// ---- reading -----------------------------------------------------------------------------------

OpClass dominant_class(const ModeResult& m) {
  size_t best = 0;
  for (size_t i = 1; i < m.class_ns.size(); ++i) {
    if (m.class_ns[i] > m.class_ns[best]) best = i;
  }
  return static_cast<OpClass>(best);
}

int furthest_from_peak(const ModelsResult& r, BenchMode mode) {
  if (!(r.peak_gflops > 0)) return -1;
  int best = -1;
  for (size_t i = 0; i < r.models.size(); ++i) {
    const double p = r.models[i].mode(mode).pct_peak;
    if (best < 0 || p < r.models[static_cast<size_t>(best)].mode(mode).pct_peak) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

std::vector<std::string> findings(const ModelsResult& r) {
  std::vector<std::string> out;
  const BenchMode modes[] = {BenchMode::train, BenchMode::infer};

  // Where each model's time goes.
  for (const ModelResult& m : r.models) {
    const OpClass t = dominant_class(m.train), i = dominant_class(m.infer);
    const double ts = m.train.class_share_pct(t), is = m.infer.class_share_pct(i);
    if (ts <= kDominantPct || is <= kDominantPct) {
      out.push_back(
          fmt::format("{}: {}; {}", m.model, class_phrase(m.train), class_phrase(m.infer)));
    } else if (t == i) {
      out.push_back(
          fmt::format("{} is {}-dominated: {} takes {:.1f}% of the training step and "
                      "{:.1f}% of the inference call",
                      m.model, op_class_name(t), op_class_name(t), ts, is));
    } else {
      out.push_back(
          fmt::format("{}: {} dominates the training step ({:.1f}%), {} the inference "
                      "call ({:.1f}%)",
                      m.model, op_class_name(t), ts, op_class_name(i), is));
    }
  }

  // Furthest from the machine's peak, and the roofline's verdict on it.
  for (BenchMode mode : modes) {
    const int f = furthest_from_peak(r, mode);
    if (f < 0) continue;
    const ModelResult& m = r.models[static_cast<size_t>(f)];
    const ModeResult& x = m.mode(mode);
    std::string s = fmt::format(
        "furthest from peak in {}: {} at {:.1f}% of {:.1f} GFLOP/s ({:.2f} GFLOP/s achieved)",
        mode_phrase(mode), m.model, x.pct_peak, r.peak_gflops, x.gflops);
    if (r.ridge_flop_per_byte > 0 && x.intensity > 0) {
      s += fmt::format(
          "; its intensity, {:.1f} FLOP/byte, is {} the ridge point ({:.1f} "
          "FLOP/byte at {} thread{})",
          x.intensity, x.intensity < r.ridge_flop_per_byte ? "below" : "above",
          r.ridge_flop_per_byte, r.threads, r.threads == 1 ? "" : "s");
      // The roofline: attainable = min(peak, intensity x bandwidth).
      const double roof = std::min(r.peak_gflops, x.intensity * r.peak_gbps);
      if (x.intensity >= r.ridge_flop_per_byte) {
        s += fmt::format(
            ", so the roofline allows the full peak: the loss is in the kernels and "
            "the overheads between them, not in memory bandwidth");
      } else if (x.gflops > roof) {
        s += fmt::format(
            ", so its main-memory roof is {:.1f} x {:.1f} GB/s = {:.1f} GFLOP/s; it "
            "runs above that, so its data stays in cache and main-memory bandwidth "
            "is not what holds it back",
            x.intensity, r.peak_gbps, roof);
      } else {
        // Near the roof, bandwidth is the limit; short of it, what is missing is lost in the
        // kernels and between them.
        const double pct_roof = 100 * x.gflops / roof;
        s += fmt::format(
            ", so its roof is {:.1f} x {:.1f} GB/s = {:.1f} GFLOP/s and it reaches "
            "{:.0f}% of that: {}",
            x.intensity, r.peak_gbps, roof, pct_roof,
            pct_roof >= kNearRoofPct
                ? "memory traffic is what limits it"
                : "short of its roof, so the rest is lost in the kernels and the "
                  "overheads between them, not to memory bandwidth");
      }
    }
    out.push_back(s);
  }
  if (!(r.peak_gflops > 0) && !r.models.empty()) {
    out.push_back(
        "no machine peak (--no-peak, or not measured): % of peak and the ridge point are "
        "unknown; `prism machine` measures them");
  }

  // Backward against forward FLOPs, per sample of the training step.
  {
    std::string s = "backward / forward FLOPs of the training step:";
    bool any = false;
    for (const ModelResult& m : r.models) {
      if (!(m.train.forward_flops > 0)) continue;
      const double batch = static_cast<double>(std::max<int64_t>(r.options.batch, 1));
      s += fmt::format("{} {} {:.2f}x ({}FLOP / {}FLOP per sample)", any ? "," : "", m.model,
                       m.train.backward_flops / m.train.forward_flops,
                       si(m.train.backward_flops / batch), si(m.train.forward_flops / batch));
      any = true;
    }
    if (any) {
      out.push_back(s +
                    " (2x is the figure for matmuls: each product has a gradient for its input "
                    "and one for its weight; a first layer needs no input gradient)");
    }
  }

  // Activation memory per sample, largest first.
  if (r.options.batch > 0 && r.models.size() > 1) {
    for (BenchMode mode : modes) {
      std::vector<std::pair<double, std::string>> per;
      for (const ModelResult& m : r.models) {
        per.emplace_back(m.mode(mode).activation_bytes / static_cast<double>(r.options.batch),
                         m.model);
      }
      std::sort(per.begin(), per.end(), std::greater<>());
      std::string s = fmt::format(
          "activation memory per sample in {} ({}):", mode_phrase(mode),
          mode == BenchMode::train ? "allocated by the forward pass" : "alive at the peak");
      for (size_t i = 0; i < per.size(); ++i) {
        s += fmt::format("{} {} {}", i ? "," : "", per[i].second,
                         format_bytes(std::llround(per[i].first)));
      }
      if (per.back().first > 0) {
        s += fmt::format(" ({} needs {:.1f}x what {} does)", per.front().second,
                         per.front().first / per.back().first, per.back().second);
      }
      out.push_back(s);
    }
  }

  // Attention's share against the context length.
  for (const ModelResult& m : r.models) {
    for (BenchMode mode : modes) {
      std::vector<const AttentionProbe*> ps;
      for (const AttentionProbe& p : r.probes) {
        if (p.model == m.model && p.mode == mode) ps.push_back(&p);
      }
      if (ps.empty()) continue;
      std::sort(ps.begin(), ps.end(), [](auto* a, auto* b) { return a->block < b->block; });
      std::string s = fmt::format("{}: attention's share of {}:", m.model, mode_phrase(mode));
      const AttentionProbe *first = nullptr, *last = nullptr;
      for (size_t i = 0; i < ps.size(); ++i) {
        if (!ps[i]->skipped.empty()) {
          s += fmt::format("{} not measured at context {} ({})", i ? "," : "", ps[i]->block,
                           ps[i]->skipped);
          continue;
        }
        s += fmt::format("{} {:.1f}% at context {}", i ? "," : "", ps[i]->attention_pct,
                         ps[i]->block);
        if (!first) first = ps[i];
        last = ps[i];
      }
      if (first && last && first != last) {
        const double a = first->attention_pct, b = last->attention_pct;
        const char* trend = b > a * 1.05 ? "grows" : b < a * 0.95 ? "shrinks" : "stays about level";
        s += fmt::format(": it {} with the context ({:.1f}% -> {:.1f}% from {} to {})", trend, a, b,
                         first->block, last->block);
      }
      out.push_back(s);
    }
  }
  return out;
}

}  // namespace prism::analysis
