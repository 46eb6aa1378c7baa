// `prism course`: where the learner stands. The modules in order with the exercises each links
// to, every exercise's status from the progress file (course.h) — not started (its file still
// has the TODO marker and it was never checked), failing, correct with the performance tier
// reached and what became of the next (missed, inconclusive, not graded) — and what to do next:
// the first failing exercise in module order, then the first not started, then the first below
// its top tier.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/commands.h"
#include "cli/course.h"
#include "cli/file_roles.h"
#include "cli/options.h"
#include "profiler/output_file.h"

namespace prism::cli {
namespace {

// The flags, as add_options (below) declares them.
struct CourseOptions {
  std::string json_path;  // also write it as JSON
};

struct Row {
  const course::Exercise* ex;
  std::vector<std::string> modules;  // the two-digit numbers of the modules that link to it
  std::string status;
  std::string tier;   // "2 of 3", "-" when not graded or not correct
  bool done = false;  // correct at its top tier (or correct, when it has no tiers)
};

std::string status_of(const course::Exercise& e, const course::Build& b,
                      const std::map<std::string, course::Record>& progress) {
  if (b.not_built.count(e.id)) return "not built here";
  const auto it = progress.find(e.id);
  if (it == progress.end()) return e.todo ? "not started" : "not checked yet";
  const std::string& r = it->second.result;
  if (r == "cannot_run_here") return "cannot run here";
  if (r == "does_not_compile") return "does not compile";
  if (r == "not_checked") return "not checked yet";
  return r;  // correct | failing
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

int run_course(const CourseOptions& o) {
  if (!o.json_path.empty()) check_writable(o.json_path, "course JSON");
  const course::Build b = course::find_build();
  const std::vector<course::Exercise> exercises = course::exercises(b.source_dir);
  const std::vector<course::Module> modules = course::modules(b.source_dir);
  const std::string progress_file = course::progress_path(b);
  const std::map<std::string, course::Record> progress = course::load_progress(progress_file);

  std::vector<Row> rows;
  for (const course::Exercise& e : exercises) {
    Row r{&e, {}, status_of(e, b, progress), "-"};
    for (const course::Module& m : modules) {
      if (std::count(m.exercises.begin(), m.exercises.end(), e.id))
        r.modules.push_back(m.id.substr(0, 2));
    }
    if (const auto it = progress.find(e.id); it != progress.end() && r.status == "correct") {
      const course::Record& rec = it->second;
      // Reached, then what became of the next tier: missed, inconclusive (the interval
      // straddled its bound: not a miss) or not graded (--no-timing, a busy machine, a timing
      // stopped at the time limit). The best tier any check reached stays: a later check that
      // was not graded does not undo it.
      if (rec.next_tier == "not graded") {
        r.tier = "not graded";
      } else if (rec.tiers > 0) {
        r.tier = fmt::format("{} of {}", rec.tier, rec.tiers);
        if (rec.tier < rec.tiers && !rec.next_tier.empty()) {
          r.tier += fmt::format(", {} {}", rec.tier + 1, rec.next_tier);
        }
      }
      if (rec.best_tier > rec.tier && rec.tiers > 0) {
        r.tier += fmt::format(" (best {})", rec.best_tier);
      }
      r.done = rec.tiers > 0 ? rec.best_tier >= rec.tiers : rec.next_tier != "not graded";
    }
    rows.push_back(r);
  }

  fmt::print("prism course: {} modules, {} exercises; progress in {}\n\n", modules.size(),
             exercises.size(), progress_file);
  fmt::print("modules (modules/NN_name/README.md) and their exercises\n");
  for (const course::Module& m : modules) {
    fmt::print("  {}\n      exercises: {}\n", m.title,
               m.exercises.empty() ? std::string("-") : join(m.exercises, ", "));
  }
  fmt::print("\n  {:<26} {:<9} {:<17} {:<22} {}\n", "exercise", "modules", "status", "tier",
             "check it with");
  for (const Row& r : rows) {
    fmt::print("  {:<26} {:<9} {:<17} {:<22} build/prism check {}\n", r.ex->id,
               r.modules.empty() ? std::string("-") : join(r.modules, ","), r.status, r.tier,
               r.ex->name);
  }

  // Next: the first exercise, in the order the modules link them, that is not correct; then the
  // first correct one below its top tier.
  std::vector<const Row*> order;
  for (const course::Module& m : modules) {
    for (const std::string& id : m.exercises) {
      for (const Row& r : rows) {
        if (r.ex->id == id && std::find(order.begin(), order.end(), &r) == order.end()) {
          order.push_back(&r);
        }
      }
    }
  }
  for (const Row& r : rows) {
    if (std::find(order.begin(), order.end(), &r) == order.end()) order.push_back(&r);
  }
  // Next: what the learner started and left broken comes before what they have not begun: the
  // first failing (or not compiling), then the first not started or not checked, then the first
  // correct one below its top tier (or whose speed was not graded).
  const Row* next = nullptr;
  auto first = [&](auto&& pick) {
    for (const Row* r : order) {
      if (!next && pick(*r)) next = r;
    }
  };
  first([](const Row& r) { return r.status == "failing" || r.status == "does not compile"; });
  first([](const Row& r) { return r.status == "not started" || r.status == "not checked yet"; });
  first([](const Row& r) { return r.status == "correct" && !r.done; });
  if (next) {
    fmt::print("\nnext: {} ({}): read exercises/{}/README.md, then build/prism check {}\n",
               next->ex->id, next->ex->title, next->ex->id, next->ex->name);
  } else {
    fmt::print("\nnext: every exercise here is correct at its top tier.\n");
  }

  if (!o.json_path.empty()) {
    nlohmann::ordered_json j;
    j["progress_file"] = progress_file;
    for (const course::Module& m : modules) {
      j["modules"].push_back({{"id", m.id}, {"title", m.title}, {"exercises", m.exercises}});
    }
    for (const Row& r : rows) {
      j["exercises"].push_back({{"id", r.ex->id},
                                {"title", r.ex->title},
                                {"modules", r.modules},
                                {"status", r.status},
                                {"tier", r.tier},
                                {"check", "build/prism check " + r.ex->name}});
    }
    j["next"] = next ? next->ex->id : "";
    profiler::write_text_file(o.json_path, j.dump(2) + "\n");
  }
  return 0;
}

void add_options(CLI::App& cmd, CourseOptions& o) {
  cmd.add_option("--json", o.json_path, "also write the modules, exercises and progress as JSON")
      ->type_name("FILE")
      ->check(file_name());
}

Action setup(CLI::App& cmd) {
  auto o = std::make_shared<CourseOptions>();
  add_options(cmd, *o);
  return {.run = [o] { return run_course(*o); },
          .files =
              [o](CommandFiles& f) {
                // The learner's progress record, which --json must not replace; none outside a
                // build.
                try {
                  f.input("the progress file", course::progress_path(course::find_build()));
                } catch (const Error&) {
                }
                f.output("--json", o->json_path);
              }};
}

const RegisteredCommand registered(
    {.order = 1400,
     .name = "course",
     .help = "the modules and exercises, your progress on each, and what is next",
     .setup = &setup});

}  // namespace

}  // namespace prism::cli
