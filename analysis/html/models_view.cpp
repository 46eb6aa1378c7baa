// The view of a `prism models --json` result ("prism.models", analysis/models_compare.cpp):
// where each model's time goes, by op class (matmul, conv, attention, ...), one stacked bar per
// model on a shared scale, a picture for training steps and one for inference.
//
// A segment's width is its class's time per call, models[i].MODE.time_by_class.CLASS.ns; the
// bar's length is their sum, which the median per call (written at the bar's end) matches up
// to the profiler's overhead and the time outside any op.
#include <algorithm>

#include <fmt/format.h>

#include "analysis/html/json_fields.h"
#include "analysis/html/profile_views.h"
#include "analysis/html/result_views.h"
#include "analysis/report_format.h"
#include "kernels/types.h"

namespace prism::analysis::html {

namespace {

// The bars start at left (the model names sit left of it); one row per model.
constexpr PlotArea kModelsArea{140, 10, 640, 0};
constexpr double kRow = 26;

// The fields, with paths written without their trailing dot ("models[0]"): json_fields.h.
const nlohmann::json& field(const nlohmann::json& j, const std::string& key,
                            const std::string& path) {
  return fields::field(j, key, fields::under(path));
}
double number_at(const nlohmann::json& j, const std::string& key, const std::string& path) {
  return fields::number(j, key, fields::under(path));
}

// The classes in op_class.h's order, so the colours never depend on the file's key order; a
// class this list lacks goes after them, by name.
const std::vector<std::string>& class_order() {
  static const std::vector<std::string> order{"matmul",        "conv",     "attention",
                                              "normalisation", "pooling",  "elementwise",
                                              "data",          "optimizer"};
  return order;
}

struct ModelBar {
  std::string model;
  bool measured = false;
  double median_ns = 0;
  std::vector<std::pair<std::string, double>> classes;  // (class, ns), class_order()'s order
  double total() const {
    double t = 0;
    for (const auto& [c, ns] : classes) t += ns;
    return t;
  }
};

std::vector<ModelBar> read_bars(const nlohmann::json& doc, const std::string& mode) {
  const nlohmann::json& models = field(doc, "models", "");
  if (!models.is_array()) throw Error("models: expected an array");
  std::vector<ModelBar> bars;
  for (size_t i = 0; i < models.size(); ++i) {
    const std::string path = fmt::format("models[{}]", i);
    const nlohmann::json& m = models[i];
    const nlohmann::json& name = field(m, "model", path);
    if (!name.is_string()) throw Error(path + ".model: expected a string");
    ModelBar b;
    b.model = name.get<std::string>();
    if (m.contains(mode) && !m[mode].is_null()) {
      const std::string mp = path + "." + mode;
      b.measured = true;
      b.median_ns = number_at(m[mode], "median_ns", mp);
      const nlohmann::json& by = field(m[mode], "time_by_class", mp);
      if (!by.is_object()) throw Error(mp + ".time_by_class: expected an object");
      std::vector<std::string> names = class_order();
      for (const auto& [cls, v] : by.items()) {
        if (std::find(names.begin(), names.end(), cls) == names.end()) names.push_back(cls);
      }
      std::sort(names.begin() + static_cast<long>(class_order().size()), names.end());
      for (const std::string& cls : names) {
        if (!by.contains(cls)) continue;
        b.classes.emplace_back(cls, number_at(by[cls], "ns", mp + ".time_by_class." + cls));
      }
    }
    bars.push_back(b);
  }
  return bars;
}

// The classes with time in any model, in order: each keeps one colour across the models.
std::vector<std::string> shown_classes(const std::vector<ModelBar>& bars) {
  std::vector<std::string> out;
  for (const std::string& cls : class_order()) {
    for (const ModelBar& b : bars) {
      for (const auto& [c, ns] : b.classes) {
        if (c == cls && ns > 0 && std::find(out.begin(), out.end(), c) == out.end()) {
          out.push_back(c);
        }
      }
    }
  }
  for (const ModelBar& b : bars) {
    for (const auto& [c, ns] : b.classes) {
      if (ns > 0 && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    }
  }
  return out;
}

// `classes`: those shown in either mode, so a class has one colour in both pictures.
Section mode_view(const std::vector<ModelBar>& bars, const std::vector<std::string>& classes,
                  const std::string& mode, double batch) {
  Section s{mode == "train" ? "Time by op class: training steps" : "Time by op class: inference",
            "One bar per model: its time per call (one " +
                std::string(mode == "train" ? "training step" : "forward pass") +
                fmt::format(" at batch {:g}", batch) +
                ") split by op class, on a shared scale. Hover a segment for its time and share.",
            ""};
  double longest = 0;
  for (const ModelBar& b : bars) longest = std::max(longest, b.total());
  const Scale x = linear_scale(0, longest / 1e6, kModelsArea.left, kModelsArea.right());  // ms
  const double axis_y = kModelsArea.top + kRow * static_cast<double>(bars.size());
  Svg svg(kViewWidth, axis_y + 44, "time per call by op class, " + mode);
  svg.x_axis(x, axis_y, kModelsArea.top, "time per call, ms");
  std::vector<std::pair<std::string, std::string>> keys;
  // A key for the classes this picture shows; each keeps its place (colour) in `classes`.
  for (size_t k = 0; k < classes.size(); ++k) {
    const auto timed = [&](const std::pair<std::string, double>& c) {
      return c.first == classes[k] && c.second > 0;
    };
    if (std::any_of(bars.begin(), bars.end(), [&](const ModelBar& b) {
          return std::any_of(b.classes.begin(), b.classes.end(), timed);
        })) {
      keys.emplace_back(fmt::format("r{}", k % 7), classes[k]);
    }
  }

  for (size_t i = 0; i < bars.size(); ++i) {
    const ModelBar& b = bars[i];
    const double y = kModelsArea.top + kRow * static_cast<double>(i);
    svg.text(kModelsArea.left - 8, y + 17, b.model, "", "end");
    if (!b.measured) {
      svg.text(kModelsArea.left + 5, y + 17, "not measured in this mode", "tick");
      continue;
    }
    // Segments laid end to end: each starts where the classes before it end.
    double at = 0;
    const double total = b.total();
    for (const auto& [cls, ns] : b.classes) {
      if (!(ns > 0)) continue;
      const size_t k =
          static_cast<size_t>(std::find(classes.begin(), classes.end(), cls) - classes.begin());
      svg.rect(x(at / 1e6), y + 4, x((at + ns) / 1e6) - x(at / 1e6), kRow - 8,
               fmt::format("r{}", k % 7),
               fmt::format("{} · {}: {} per call ({:.1f}% of the classes' time)", b.model, cls,
                           format_ns(ns), total > 0 ? 100 * ns / total : 0.0));
      at += ns;
    }
    svg.text(x(at / 1e6) + 5, y + 17, "median " + format_ns(b.median_ns), "tick");
  }
  s.body = legend(keys) + svg.str();
  return s;
}

Block models_block(const std::string& name, const nlohmann::json& doc) {
  if (!doc.is_object()) throw Error("expected a JSON object");
  double batch = 0;
  if (doc.contains("options") && doc["options"].is_object() && doc["options"].contains("batch")) {
    batch = number_at(doc["options"], "batch", "options");
  }
  Block b{name, "", {}};
  const std::vector<ModelBar> train = read_bars(doc, "train"), infer = read_bars(doc, "infer");
  std::vector<ModelBar> both = train;
  both.insert(both.end(), infer.begin(), infer.end());
  const std::vector<std::string> classes = shown_classes(both);
  std::string names;
  for (const ModelBar& m : train) names += (names.empty() ? "" : ", ") + m.model;
  const auto measured = [](const ModelBar& m) { return m.measured; };
  if (std::any_of(train.begin(), train.end(), measured)) {
    b.sections.push_back(mode_view(train, classes, "train", batch));
  }
  if (std::any_of(infer.begin(), infer.end(), measured)) {
    b.sections.push_back(mode_view(infer, classes, "infer", batch));
  }
  b.subheading = fmt::format("models side by side: {}, batch {:g}", names, batch);
  if (b.sections.empty()) {
    b.sections.push_back({"Time by op class", "", note("No model was measured.")});
  }
  return b;
}

const ResultView reg("prism.models", &models_block);

}  // namespace

}  // namespace prism::analysis::html
