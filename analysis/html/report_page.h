// The report as one self-contained HTML page: inline CSS and inline SVG only, no script, no
// font, no URL, so it opens from disk in any browser, offline, and prints. Colours come from
// the Okabe-Ito palette (distinct under the common colour-vision deficiencies) and follow the
// reader's light or dark setting (prefers-color-scheme).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace prism::analysis::html {

// One view: a title, one line on how to read it, and its body (an <svg>, or HTML such as a
// paragraph saying why there is no picture). The body is inserted as it is: the view that
// builds it escapes its text (svg.h's escape()).
struct Section {
  std::string title;
  std::string how_to_read;
  std::string body;
};

// The views of one input file, under a heading (the file name) and a line about the run.
struct Block {
  std::string heading;
  std::string subheading;
  std::vector<Section> sections;
};

// The whole page. `title` and the headings are plain text (escaped here).
std::string report_page(const std::string& title, const std::vector<Block>& blocks);

// A legend line: one coloured square per (CSS class, name) pair.
std::string legend(const std::vector<std::pair<std::string, std::string>>& items);
// A note in place of (or beside) a picture; `html` is inserted as it is.
std::string note(const std::string& html);

// The CSS classes the views colour with, one per profile phase: "fwd", "bwd", "opt", "rec",
// "comm", and "other" for anything else (a scope, a phase a later profiler adds). Stacked bands
// (memory by role) take "r0" .. "r6".
const char* phase_class(const std::string& phase);

}  // namespace prism::analysis::html
