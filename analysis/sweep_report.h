// The report of `prism sweep`: the table of points, the fit lines, the knees, the thread
// scaling, the prediction and its check, the findings; and the same as JSON.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "analysis/sweep.h"

namespace prism::analysis {

std::string format_sweep(const SweepResult& r);

// "kind": "prism.sweep", "schema": 1 (the fields: cli/README.md, `prism sweep`).
nlohmann::ordered_json sweep_to_json(const SweepResult& r);

}  // namespace prism::analysis
