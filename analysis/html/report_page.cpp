// The page around the views (report_page.h). Every colour is a CSS variable set twice, for light
// and dark, so the SVG carries classes only and one drawing serves both.
#include "analysis/html/report_page.h"

#include "analysis/html/svg.h"

namespace prism::analysis::html {

namespace {

// Okabe & Ito (2008), "Color Universal Design": blue #0072B2, vermillion #D55E00, bluish green
// #009E73, reddish purple #CC79A7, orange #E69F00, sky blue #56B4E9. On the dark background the
// two darkest (blue, vermillion) give way to sky blue and orange, which keep the contrast.
// Recompute (activation checkpointing: a forward run again in backward) is sky blue, a lighter
// forward, on light; on dark, where forward is sky blue, yellow #F0E442. Communication (data-
// parallel gradient sync) is orange #E69F00 on light; on dark, where backward is orange,
// vermillion #D55E00.
constexpr const char* kStyle = R"(
:root {
  --bg: #ffffff; --fg: #1a1a1a; --muted: #5a5a5a; --grid: #e4e4e4; --axis: #7a7a7a;
  --fwd: #0072B2; --bwd: #D55E00; --opt: #009E73; --other: #CC79A7; --rec: #56B4E9;
  --comm: #E69F00;
  --roof: #1a1a1a; --peak: #D55E00; --area: #56B4E9;
  color-scheme: light dark;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #16181c; --fg: #e8e8e8; --muted: #a8a8a8; --grid: #30343a; --axis: #8a8a8a;
    --fwd: #56B4E9; --bwd: #E69F00; --opt: #009E73; --other: #CC79A7; --rec: #F0E442;
    --comm: #D55E00;
    --roof: #e8e8e8; --peak: #E69F00; --area: #0072B2;
  }
}
body { background: var(--bg); color: var(--fg); margin: 2em auto; max-width: 1000px;
       padding: 0 1em; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; margin: 1.6em 0 0.1em; border-bottom: 1px solid var(--grid); }
h3 { font-size: 1.05em; margin: 1.2em 0 0.2em; }
p.sub, p.how { color: var(--muted); margin: 0.2em 0 0.6em; }
p.note { border-left: 3px solid var(--axis); padding-left: 0.6em; }
code { font: 0.95em ui-monospace, "SFMono-Regular", Menlo, monospace; }
svg { max-width: 100%; height: auto; display: block; }
svg text { fill: var(--fg); font: 11px ui-monospace, "SFMono-Regular", Menlo, monospace; }
svg text.tick { fill: var(--muted); }
svg text.axis-name { font-family: system-ui, sans-serif; font-size: 12px; }
svg .grid { stroke: var(--grid); stroke-width: 1; }
svg .axis { stroke: var(--axis); stroke-width: 1; }
svg .fwd { fill: var(--fwd); stroke: var(--fwd); }
svg .bwd { fill: var(--bwd); stroke: var(--bwd); }
svg .opt { fill: var(--opt); stroke: var(--opt); }
svg .rec { fill: var(--rec); stroke: var(--rec); }
svg .comm { fill: var(--comm); stroke: var(--comm); }
svg .other { fill: var(--other); stroke: var(--other); }
svg rect.fwd, svg rect.bwd, svg rect.opt, svg rect.rec, svg rect.comm,
svg rect.other { stroke: none; }
svg circle { fill-opacity: 0.55; stroke-width: 1.2; }
svg .roof { stroke: var(--roof); stroke-width: 2; fill: none; }
svg .ridge { stroke: var(--roof); stroke-width: 1; stroke-dasharray: 4 3; }
svg .area { fill: var(--area); fill-opacity: 0.45; stroke: var(--area); }
svg .peak { stroke: var(--peak); fill: var(--peak); stroke-width: 1.5; }
.legend span { margin-right: 1.2em; white-space: nowrap; }
.legend i { display: inline-block; width: 0.9em; height: 0.9em; margin-right: 0.3em;
            vertical-align: -0.1em; }
.legend i.fwd { background: var(--fwd); } .legend i.bwd { background: var(--bwd); }
.legend i.opt { background: var(--opt); } .legend i.other { background: var(--other); }
.legend i.rec { background: var(--rec); } .legend i.comm { background: var(--comm); }
svg .r0, .legend i.r0 { fill: #0072B2; background: #0072B2; }
svg .r1, .legend i.r1 { fill: #E69F00; background: #E69F00; }
svg .r2, .legend i.r2 { fill: #009E73; background: #009E73; }
svg .r3, .legend i.r3 { fill: #D55E00; background: #D55E00; }
svg .r4, .legend i.r4 { fill: #56B4E9; background: #56B4E9; }
svg .r5, .legend i.r5 { fill: #CC79A7; background: #CC79A7; }
svg .r6, .legend i.r6 { fill: #F0E442; background: #F0E442; }
svg polygon[class^="r"] { fill-opacity: 0.8; stroke: none; }
section { break-inside: avoid; page-break-inside: avoid; }
@media print {
  :root { --bg: #ffffff; --fg: #000000; --muted: #333333; --grid: #dddddd; }
  body { margin: 0; max-width: none; }
}
)";

}  // namespace

const char* phase_class(const std::string& phase) {
  if (phase == "forward") return "fwd";
  if (phase == "backward") return "bwd";
  if (phase == "optimizer") return "opt";
  if (phase == "recompute") return "rec";
  if (phase == "communication") return "comm";
  return "other";
}

std::string legend(const std::vector<std::pair<std::string, std::string>>& items) {
  std::string s = "<p class=\"legend\">";
  for (const auto& [cls, name] : items) {
    s += "<span><i class=\"" + escape(cls) + "\"></i>" + escape(name) + "</span>";
  }
  return s + "</p>\n";
}

std::string note(const std::string& html) {
  return "<p class=\"note\">" + html + "</p>\n";
}

std::string report_page(const std::string& title, const std::vector<Block>& blocks) {
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  html += "<title>" + escape(title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  html += "<h1>" + escape(title) + "</h1>\n";
  for (const Block& b : blocks) {
    html += "<h2>" + escape(b.heading) + "</h2>\n";
    if (!b.subheading.empty()) html += "<p class=\"sub\">" + escape(b.subheading) + "</p>\n";
    for (const Section& s : b.sections) {
      html += "<section>\n<h3>" + escape(s.title) + "</h3>\n";
      html += "<p class=\"how\">" + escape(s.how_to_read) + "</p>\n" + s.body + "</section>\n";
    }
  }
  html += "</body>\n</html>\n";
  return html;
}

}  // namespace prism::analysis::html
