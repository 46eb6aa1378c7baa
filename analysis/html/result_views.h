// The views of prism's other results (bench, compare, sweep, models) in `prism report`. Each
// file that draws a kind of result registers itself here, under the "kind" its JSON carries
// ("prism.bench", ...), so adding a view touches no shared list: `prism report` reads a file,
// and a document with a registered kind becomes that view's block, anything else is read as a
// profile (profile_views.h), which names the kinds it knows when it is given another.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/html/profile_views.h"
#include "analysis/html/report_page.h"

namespace prism::analysis::html {

// Makes the views of one result document; throws prism::Error naming the field that is missing
// or mistyped. `name` heads the block (the file name).
using BlockMaker = Block (*)(const std::string& name, const nlohmann::json& doc);

// Registers `make` for documents whose "kind" is `kind`; a static object of a view's file.
struct ResultView {
  ResultView(const char* kind, BlockMaker make);
};

// The maker registered for `kind`, or nullptr.
BlockMaker find_result_view(const std::string& kind);
// The registered kinds, sorted (for messages).
std::vector<std::string> result_view_kinds();

// The block `prism report` draws for one document: its kind's view when one is registered,
// else the document read as a profile (read_profile) under the roofs `peaks_for(threads)` gives
// for the threads it ran on. Throws prism::Error naming what is wrong.
Block result_block(const std::string& name, const nlohmann::json& doc,
                   const std::function<RooflinePeaks(int threads)>& peaks_for);

// A file's text parsed as JSON; "PATH: cannot be read (...)", "PATH: the file is empty",
// "PATH: not valid JSON: ..." (a truncated file says so) otherwise.
nlohmann::json load_json(const std::string& path);

}  // namespace prism::analysis::html
