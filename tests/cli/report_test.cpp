// `prism report` as a user runs it: a real training profile becomes one self-contained page
// with its views; several profiles each get their own block; and every kind of bad input
// fails with exit 1 and a message naming the file, before any page is written.
#include <filesystem>
#include <fstream>
#include <string>

#include <doctest/doctest.h>

#include "tests/cli/cli_run.h"

using namespace prism::cli_test;

namespace {

// No cached machine figures: the report must not measure them (it would take seconds).
std::string no_machine_cache(const TempDir& dir) {
  return "PRISM_MACHINE_CACHE='" + (dir / "machine.json").string() + "'";
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

// A profile from a real, short training run.
std::string train_profile(const TempDir& dir, const std::string& name) {
  const RunResult r = run_prism(
      "train mlp --data spirals --steps 6 --threads 1 --profile "
      "--profile-steps 3 --json " +
          name,
      dir.path());
  REQUIRE(r.exited);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  return read_file(dir / name);
}

}  // namespace

TEST_CASE("prism report: a training profile as one self-contained page with its views") {
  TempDir dir;
  train_profile(dir, "p.json");
  const RunResult r = run_prism("report p.json -o out.html", dir.path(), no_machine_cache(dir));
  REQUIRE(r.exited);
  CHECK_MESSAGE(r.code == 0, r.err);
  CHECK(contains(r.out, "wrote out.html (1 input)"));
  const std::string page = read_file(dir / "out.html");
  for (const char* s :
       {"<!DOCTYPE html>", "<h2>p.json</h2>", "model mlp on spirals", "<h3>Op breakdown</h3>",
        "<h3>Roofline</h3>", "<h3>Memory timeline (cpu)</h3>", "<h3>Module icicle</h3>",
        "<h3>Step time</h3>", "class=\"fwd\"", "class=\"bwd\"", "class=\"opt\"",
        "linear (linear.dx)", "run <code>prism machine</code> to add the roofline"}) {
    CHECK_MESSAGE(contains(page, s), s);
  }
  // The profile carries its memory timeline, so the view draws a curve, not the peak alone,
  // stacked by role (the weights were allocated before the window, the activations in it) with
  // the op that reached the peak named.
  CHECK_FALSE(contains(page, "keeps the peak only"));
  CHECK(contains(page, "parameter"));
  CHECK(contains(page, "activation"));
  CHECK_FALSE(contains(page, "http://"));
  CHECK_FALSE(contains(page, "https://"));
  CHECK_FALSE(contains(page, "<script"));
  // No stray temporary beside it: the page was renamed into place.
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    files += e.path().filename().string().rfind("out.html", 0) == 0 ? 1 : 0;
  }
  CHECK(files == 1);
}

TEST_CASE("prism report: several profiles, one block each, headed by the file name") {
  TempDir dir;
  const std::string text = train_profile(dir, "a.json");
  write(dir / "b.json", text);
  const RunResult r = run_prism("report a.json b.json", dir.path(), no_machine_cache(dir));
  REQUIRE(r.exited);
  CHECK_MESSAGE(r.code == 0, r.err);
  CHECK(contains(r.out, "wrote report.html (2 inputs)"));  // the default output
  const std::string page = read_file(dir / "report.html");
  CHECK(contains(page, "<h2>a.json</h2>"));
  CHECK(contains(page, "<h2>b.json</h2>"));
  size_t views = 0;
  for (size_t at = 0; (at = page.find("<h3>Op breakdown</h3>", at)) != std::string::npos; ++at) {
    ++views;
  }
  CHECK(views == 2);
}

TEST_CASE("prism report: bad input is refused with exit 1, naming the file, writing nothing") {
  TempDir dir;
  const std::string good = train_profile(dir, "good.json");
  write(dir / "notjson.json", "hello, world\n");
  write(dir / "truncated.json", good.substr(0, good.size() / 2));
  write(dir / "array.json", "[1, 2, 3]\n");
  write(dir / "bench.json", "{\"kind\": \"prism.baseline\", \"model\": \"mlp\"}\n");
  write(dir / "other.json", "{\"name\": \"not a profile\"}\n");
  write(dir / "empty.json", "");
  std::string mistyped = good;
  const size_t at = mistyped.find("\"self_ns\":");
  REQUIRE(at != std::string::npos);
  mistyped.insert(at + 10, "\"x\",\"ignored\":");  // "self_ns": "x", "ignored": <number>
  write(dir / "mistyped.json", mistyped);

  struct Case {
    const char* file;
    const char* says;
  };
  for (const Case& c : {Case{"notjson.json", "not valid JSON"}, Case{"truncated.json", "truncated"},
                        Case{"array.json", "expected a JSON object, got array"},
                        Case{"bench.json", "this is a prism.baseline result, not a profile"},
                        Case{"other.json", "not a profile: no \"meta\" field"},
                        Case{"empty.json", "the file is empty"},
                        Case{"mistyped.json", "ops[0].self_ns: expected a number"},
                        Case{"missing.json", "cannot be read (No such file or directory)"}}) {
    CAPTURE(c.file);
    // The bad file second, so a good first input is no excuse to start writing.
    const RunResult r = run_prism(std::string("report good.json ") + c.file + " -o out.html",
                                  dir.path(), no_machine_cache(dir));
    REQUIRE(r.exited);
    CHECK(r.code == 1);
    CHECK(contains(r.err, std::string("prism: error: ") + c.file + ": "));
    CHECK_MESSAGE(contains(r.err, c.says), r.err);
    CHECK_FALSE(fs::exists(dir / "out.html"));
  }

  // An existing page stays as it was.
  write(dir / "out.html", "old page");
  const RunResult r = run_prism("report truncated.json -o out.html", dir.path());
  CHECK(r.code == 1);
  CHECK(read_file(dir / "out.html") == "old page");
}

TEST_CASE("prism report: usage errors") {
  TempDir dir;
  RunResult r = run_prism("report", dir.path());
  CHECK(r.code == 2);
  CHECK(contains(r.err, "inputs is required"));
  r = run_prism("report p.json -o ''", dir.path());
  CHECK(r.code == 2);
  CHECK(contains(r.err, "expected a file name"));
}
