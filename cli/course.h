// The course as it lies on disk, for `prism check` and `prism course`: the modules and exercises
// in the source tree, the exercises this build has, and the learner's progress.
//
// Where things are: `prism` runs from its build directory (build/prism), which the configure
// step marks with course/build.txt (exercises/CMakeLists.txt):
//   source <the source directory>
//   cmake <the cmake that configured it>
//   exercise <NN_name>                  one line per exercise this build can check
//   not_built <NN_name> <why>           one per exercise it cannot (a CUDA kernel without nvcc)
// The modules (modules/NN_name/README.md) and exercises (exercises/NN_name/README.md) are read
// from the source tree each time, so the list is never stale. A module's exercises are the
// exercise folders its README links to.
//
// Progress: one JSON file, build/course/progress.json (PRISM_COURSE_DIR=DIR puts it in DIR
// instead: the tests do, to leave a learner's file alone), one entry per exercise checked:
//   {"exercises": {"01_relu": {"result": "correct", "tier": 1, "tiers": 1,
//                              "best_tier": 1, "checked": "2026-11-25T17:03:00Z"}}}
// result is what the last check said: correct, failing, not_checked (no kernel registered, a bad
// flag), cannot_run_here (a CUDA kernel without a GPU), or does_not_compile. best_tier keeps the
// highest tier any correct check reached.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace prism::cli::course {

// The build `prism` runs from (the marker above). Throws prism::Error when there is none: a
// prism binary copied elsewhere cannot build exercises.
struct Build {
  std::string build_dir;
  std::string source_dir;
  std::string cmake;
  std::vector<std::string> exercises;            // NN_name, course order
  std::map<std::string, std::string> not_built;  // NN_name -> why
};
Build find_build();

struct Exercise {
  std::string id;            // "01_relu"
  std::string name;          // "relu": what `prism check` takes
  std::string title;         // the README's first heading
  std::string learner_file;  // relative to the source dir: "exercises/01_relu/relu.cpp"
  bool todo = false;         // the learner's file still has its TODO(exercise) marker
};

struct Module {
  std::string id;                      // "03_roofline"
  std::string title;                   // the README's first heading
  std::vector<std::string> exercises;  // the exercise ids its README links to, in order
};

std::vector<Exercise> exercises(const std::string& source_dir);
std::vector<Module> modules(const std::string& source_dir);

// `name` as a learner types it: "relu", "01_relu" or "01". nullptr when none matches.
const Exercise* find_exercise(const std::vector<Exercise>& all, const std::string& name);

struct Record {
  std::string result;  // correct | failing | not_checked | cannot_run_here | does_not_compile
  int tier = 0, tiers = 0, best_tier = 0;
  // The tier after the last reached: missed | inconclusive | not graded; "" when none is left.
  std::string next_tier;
  std::string checked;  // UTC, ISO 8601
};

std::string progress_path(const Build& b);
// The records by exercise id; empty when the file does not exist yet. Throws prism::Error for a
// file that exists but is not a progress file (named, with what is wrong).
std::map<std::string, Record> load_progress(const std::string& path);
// Sets one exercise's record (keeping best_tier) and rewrites the file atomically.
void save_record(const std::string& path, const std::string& id, Record r);

}  // namespace prism::cli::course
