#include "analysis/report_format.h"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "profiler/text_table.h"

namespace prism::analysis {

TextColumns::TextColumns(std::vector<std::string> headers) : headers_(std::move(headers)) {}

void TextColumns::add(std::vector<std::string> cells) {
  if (cells.size() != headers_.size()) {
    throw std::logic_error("TextColumns: a row has " + std::to_string(cells.size()) +
                           " cells for " + std::to_string(headers_.size()) + " columns");
  }
  rows_.push_back(std::move(cells));
}

std::string TextColumns::str(const std::string& indent) const {
  std::vector<profiler::text::Column> cols;
  for (size_t c = 0; c < headers_.size(); ++c) {
    profiler::text::Column col{headers_[c], c == 0, {}, 0};
    for (const auto& r : rows_) col.cells.push_back(r[c]);
    cols.push_back(std::move(col));
  }
  const std::string table = profiler::text::render(cols);
  std::string out;
  size_t start = 0;
  while (start < table.size()) {
    const size_t end = table.find('\n', start);
    out += indent + table.substr(start, end - start) + "\n";
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

std::string format_ns(double ns) {
  const double a = std::abs(ns);
  auto three = [](double v, const char* unit) {
    const int decimals = v >= 100 ? 0 : v >= 10 ? 1 : 2;
    return fmt::format("{:.{}f} {}", v, decimals, unit);
  };
  if (a >= 1e9) return three(ns / 1e9, "s");
  if (a >= 1e6) return three(ns / 1e6, "ms");
  if (a >= 1e3) return three(ns / 1e3, "us");
  return three(ns, "ns");
}

std::string format_bytes(int64_t bytes) {
  if (bytes < 0) return "-";
  const double b = static_cast<double>(bytes);
  if (b >= 1e9) return fmt::format("{:.2f} GB", b / 1e9);
  if (b >= 1e6) return fmt::format("{:.1f} MB", b / 1e6);
  if (b >= 1e3) return fmt::format("{:.1f} kB", b / 1e3);
  return fmt::format("{} B", bytes);
}

}  // namespace prism::analysis
