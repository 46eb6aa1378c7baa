// The module icicle (profile_views.h): the module tree drawn once per phase (forward, backward,
// then optimizer when the optimizer's steps were scoped, recompute when activation
// checkpointing ran forwards again in backward, and communication when a data-parallel run
// synced gradients), top to bottom, on one ms scale. Row d
// holds the modules at depth d; a module's rect is as wide as the op self time of its subtree in
// that phase, and its children sit left to right inside it, so the part of a rect with nothing
// under it is the time of the module's own ops. Sharing the scale keeps the totals comparable
// (backward usually takes about twice forward: two matmuls per one).
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "analysis/html/profile_views.h"

namespace prism::analysis::html {

namespace {

// 11 px monospace is about 6.6 px a character (the page's style); 4 px padding each side.
constexpr double kCharPx = 6.6;
constexpr double kPad = 4;

double phase_ns(const ProfileModule& m, int phase) {
  return phase == 0   ? m.fwd_ns
         : phase == 1 ? m.bwd_ns
         : phase == 2 ? m.opt_ns
         : phase == 3 ? m.rec_ns
                      : m.comm_ns;
}

// In profiler::Phase's order.
constexpr int kPhases = 5;
const char* const kPhaseName[kPhases] = {"forward", "backward", "optimizer", "recompute",
                                         "communication"};
const char* const kPhaseClass[kPhases] = {"fwd", "bwd", "opt", "rec", "comm"};

std::string ms(double ns) {
  return fmt::format("{:.3f} ms", ns / 1e6);
}

std::string share(double part, double whole) {
  return whole > 0 ? fmt::format("{:.1f}%", 100 * part / whole) : "-";
}

// The tree as index lists: the roots (depth 1, in file order, then the "" row of ops outside
// every scope, last) and each module's children (depth + 1, path prefix + ".").
struct Tree {
  std::vector<size_t> roots;
  std::vector<std::vector<size_t>> children;
  int depth = 0;  // the deepest row
};

Tree build_tree(const ProfileData& p) {
  Tree t;
  t.children.resize(p.modules.size());
  std::map<std::string, size_t> index;
  size_t outside = p.modules.size();
  for (size_t i = 0; i < p.modules.size(); ++i) {
    const ProfileModule& m = p.modules[i];
    index[m.path] = i;
    t.depth = std::max(t.depth, std::max(m.depth, 1));
    if (m.depth == 0) {
      outside = i;
    } else if (m.depth == 1) {
      t.roots.push_back(i);
    } else {
      // read_profile checked that the parent is listed earlier, one level up.
      t.children[index.at(m.path.substr(0, m.path.rfind('.')))].push_back(i);
    }
  }
  if (outside < p.modules.size()) t.roots.push_back(outside);
  return t;
}

double phase_total(const ProfileData& p, const Tree& t, int phase) {
  double total = 0;
  for (size_t r : t.roots) total += phase_ns(p.modules[r], phase);
  return total;
}

std::string tooltip(const ProfileModule& m, const double (&total)[kPhases]) {
  std::string t = m.depth == 0 ? "(outside scopes): ops run outside every module"
                               : m.path + (m.type.empty() ? "" : " (" + m.type + ")") +
                                     fmt::format(", {} calls", m.calls);
  const double flops[kPhases] = {m.fwd_flops, m.bwd_flops, 0, m.rec_flops, 0};
  for (int ph = 0; ph < kPhases; ++ph) {
    if (ph >= 2 && phase_ns(m, ph) <= 0) continue;
    t += fmt::format("\n{} {} ({} of {})", kPhaseName[ph], ms(phase_ns(m, ph)),
                     share(phase_ns(m, ph), total[ph]), kPhaseName[ph]);
    if (flops[ph] > 0) t += fmt::format(", {:.3g} FLOP", flops[ph]);
  }
  return t;
}

struct Icicle {
  const ProfileData& p;
  const Tree& tree;
  const Scale& x;
  Svg& svg;
  int phase;
  double top;
  const double (&total)[kPhases];

  // Lays `ids` left to right from `start_ns`, each with its children inside it.
  void lay(const std::vector<size_t>& ids, double start_ns) {
    for (size_t i : ids) {
      const ProfileModule& m = p.modules[i];
      const double ns = phase_ns(m, phase);
      if (ns <= 0) continue;
      const double x0 = x(start_ns / 1e6), w = x((start_ns + ns) / 1e6) - x0;
      const double y = top + kIcicleRow * std::max(m.depth - 1, 0);
      const std::string tip = tooltip(m, total);
      const std::string cls = m.depth == 0 ? "other" : kPhaseClass[phase];
      svg.rect(x0, y, w, kIcicleRow - 2, cls, tip);
      const std::string label = m.depth == 0 ? "(outside)" : m.name;
      if (w >= kCharPx * static_cast<double>(label.size()) + 2 * kPad) {
        svg.text(x0 + kPad, y + 14, label, "", "start", tip);
      }
      lay(tree.children[i], start_ns);
      start_ns += ns;
    }
  }
};

}  // namespace

Scale module_scale(const ProfileData& p) {
  const Tree t = build_tree(p);
  double top = 0;
  for (int ph = 0; ph < kPhases; ++ph) top = std::max(top, phase_total(p, t, ph));
  return linear_scale(0, top / 1e6, kIcicleArea.left, kIcicleArea.right());
}

Section module_view(const ProfileData& p) {
  Section s{"Module icicle",
            "The module tree once per phase (forward, backward, optimizer, recompute, "
            "communication) on one time scale: "
            "each rect is a module, as wide as the op time of it and its children, which sit "
            "inside it one row down. Hover a rect for its path, calls and times.",
            ""};
  if (!p.has_modules) {
    s.body = note(
        "This profile has no module tree (it was written before profiles listed modules): "
        "profile again with <code>prism train MODEL --profile --json F</code> to draw it.");
    return s;
  }
  const Tree tree = build_tree(p);
  double total[kPhases] = {};
  for (int ph = 0; ph < kPhases; ++ph) total[ph] = phase_total(p, tree, ph);
  std::vector<int> phases;  // those with time, each drawn as one icicle
  for (int ph = 0; ph < kPhases; ++ph) {
    if (total[ph] > 0) phases.push_back(ph);
  }
  if (phases.empty()) {
    s.body = note("No op time was recorded inside any module or outside them: nothing to draw.");
    return s;
  }
  const Scale x = module_scale(p);
  // Icicle k spans [top_k, top_k + rows]: top_k = top + k (rows + gap).
  const double rows = kIcicleRow * tree.depth;
  const double n = static_cast<double>(phases.size());
  const double axis_y = kIcicleArea.top + n * rows + (n - 1) * kIcicleGap + 4;
  Svg svg(kViewWidth, axis_y + 44, "module icicles: time per module, one per phase");
  svg.x_axis(x, axis_y, kIcicleArea.top, "op self time, ms (all profiled steps)");
  std::vector<std::pair<std::string, std::string>> keys;
  for (size_t k = 0; k < phases.size(); ++k) {
    const int ph = phases[k];
    const double top = kIcicleArea.top + static_cast<double>(k) * (rows + kIcicleGap);
    svg.text(kIcicleArea.left - 8, top + 14, kPhaseName[ph], "", "end",
             fmt::format("{} total {}", kPhaseName[ph], ms(total[ph])));
    Icicle{p, tree, x, svg, ph, top, total}.lay(tree.roots, 0);
    keys.emplace_back(kPhaseClass[ph], kPhaseName[ph]);
  }
  keys.emplace_back("other", "outside every module");
  s.body = legend(keys) + svg.str();
  return s;
}

}  // namespace prism::analysis::html
