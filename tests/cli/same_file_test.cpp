// No command destroys its own input (cli/file_roles.h): every command that reads a file and
// writes one is run with each output naming an input, spelled five ways (the same name, ./name,
// dir/../name, a symbolic link, a hard link); each must exit 2 before any work, name both flags,
// and leave the input's bytes as they were. Two outputs naming one file are refused the same
// way. The table below is the list: a new command with a file flag joins it (the last case fails
// until it does).
#include <doctest/doctest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/cli_run.h"

using namespace prism::cli_test;

namespace {

// A command line with {IN} (the input the test creates) and {OUT} (an output naming it), and
// the flags the message must name.
struct Entry {
  const char* args;
  const char* in_flag;
  const char* out_flag;
};

// Every command with both inputs and outputs, every pairing of an input flag with an output flag.
const Entry kInputOutput[] = {
    {"train mlp --data spirals --steps 1 --load {IN} --save {OUT}", "--load", "--save"},
    {"train mlp --data spirals --steps 1 --load {IN} --json {OUT}", "--load", "--json"},
    {"train mlp --data spirals --steps 1 --load {IN} --trace {OUT}", "--load", "--trace"},
    {"train mlp --data spirals --steps 1 --load {IN} --report {OUT}", "--load", "--report"},
    {"train transformer --data {IN} --steps 1 --save {OUT}", "--data", "--save"},
    {"train transformer --data {IN} --steps 1 --json {OUT}", "--data", "--json"},
    {"bench mlp --load {IN} --json {OUT}", "--load", "--json"},
    {"bench transformer --data {IN} --json {OUT}", "--data", "--json"},
    {"report {IN} -o {OUT}", "IN.json", "--output"},
    {"report other.json {IN} --output {OUT}", "IN.json", "--output"},
    {"compare {IN} other.json --json {OUT}", "BASE", "--json"},
    {"compare other.json {IN} --json {OUT}", "CAND", "--json"},
    {"gate {IN} other.json --json {OUT}", "BASE", "--json"},
    {"gate other.json {IN} --json {OUT}", "CAND", "--json"},
    {"quantize {IN} -o {OUT}", "model_file", "--output"},
    {"quantize w.st --data {IN} --output {OUT}", "--data", "--output"},
    {"compare mlp --data spirals --load {IN} --json {OUT} --b \"--threads 2\"", "--load", "--json"},
    {"compare mlp --data spirals --json {OUT} --b \"--load {IN}\"", "--b's --load", "--json"},
    {"compare mlp --data spirals --json {OUT} --a \"--load {IN}\" --b \"--threads 2\"",
     "--a's --load", "--json"},
    {"compare transformer --data {IN} --json {OUT} --b \"--threads 2\"", "--data", "--json"},
    {"quantize w.st --data {IN} --output {OUT}", "--data", "--output"},
};

// Two outputs of one run naming one file ({A} and {B}), and the flags in the message's order.
struct Pair {
  const char* args;
  const char* first;
  const char* second;
};
const Pair kOutputOutput[] = {
    {"train mlp --data spirals --steps 1 --save {A} --json {B}", "--save", "--json"},
    {"train mlp --data spirals --steps 1 --json {A} --trace {B}", "--json", "--trace"},
    {"train mlp --data spirals --steps 1 --trace {A} --report {B}", "--trace", "--report"},
    {"demo --steps 1 --trace {A} --json {B}", "--trace", "--json"},
    {"demo --steps 1 --json {A} --report {B}", "--json", "--report"},
};

// The commands `prism --help` lists, each placed: in the tables above, or with no file to
// destroy (inputs only, outputs only and a single one, or no file flag at all).
const std::set<std::string> kInTables = {"train", "bench",    "report", "compare",
                                         "gate",  "quantize", "demo",   "course"};
const std::set<std::string> kNoPair = {"ops",    "summary", "machine", "lab",
                                       "models", "sweep",   "check",   "generate"};

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

}  // namespace

TEST_CASE("no output may be an input: refused before any work, however the name is spelled") {
  for (const Entry& e : kInputOutput) {
    CAPTURE(e.args);
    TempDir dir;
    const std::string bytes = "the input's bytes: nothing may overwrite them\n";
    std::ofstream(dir / "in.dat") << bytes;
    fs::create_directory(dir / "sub");
    fs::create_symlink("in.dat", dir / "link.dat");
    fs::create_hard_link(dir / "in.dat", dir / "hard.dat");
    for (const char* out : {"in.dat", "./in.dat", "sub/../in.dat", "link.dat", "hard.dat"}) {
      CAPTURE(out);
      const std::string args = replace_all(replace_all(e.args, "{IN}", "in.dat"), "{OUT}", out);
      const RunResult r = run_prism(args, dir.path());
      REQUIRE(r.exited);
      CHECK(r.code == 2);
      CHECK_MESSAGE(contains(r.err, std::string(e.out_flag) + " (" + out + ") is the input " +
                                        e.in_flag + " (in.dat)"),
                    r.err);
      CHECK(contains(r.err, "writing it would destroy the input"));
      CHECK(r.out.empty());  // before any work: not even the run's first line
      CHECK(read_file(dir / "in.dat") == bytes);
    }
  }
}

TEST_CASE("no two outputs may be one file") {
  for (const Pair& p : kOutputOutput) {
    CAPTURE(p.args);
    TempDir dir;
    fs::create_symlink("a.out", dir / "alias.out");
    for (const char* second : {"a.out", "./a.out", "alias.out"}) {
      const std::string args = replace_all(replace_all(p.args, "{A}", "a.out"), "{B}", second);
      const RunResult r = run_prism(args, dir.path());
      REQUIRE(r.exited);
      CHECK(r.code == 2);
      CHECK_MESSAGE(
          contains(r.err, std::string(p.first) + " and " + p.second + " name the same file"),
          r.err);
      CHECK_FALSE(fs::exists(dir / "a.out"));
    }
  }
  // The page a trace brings along (report.html beside it) is an output too.
  TempDir dir;
  const RunResult r =
      run_prism("train mlp --data spirals --steps 1 --trace t.json --json report.html", dir.path());
  CHECK(r.code == 2);
  CHECK(contains(r.err, "--json and --trace's report.html name the same file"));
}

TEST_CASE("streams are not files: two outputs to /dev/null run, and a trace there has no page") {
  TempDir dir;
  const RunResult r = run_prism(
      "train mlp --data spirals --steps 2 --json /dev/null --trace /dev/null", dir.path());
  REQUIRE(r.exited);
  CHECK_MESSAGE(r.code == 0, r.err);
  CHECK_FALSE(contains(r.out, "report.html"));
  // /dev/stdout is a stream by its name, even when stdout is redirected to a file (run_prism
  // sends it to one): two outputs may share it, and a trace sent there brings no page.
  const RunResult out = run_prism(
      "train mlp --data spirals --steps 2 --json /dev/stdout --trace /dev/stdout", dir.path());
  CHECK_MESSAGE(out.code == 0, out.err);
  CHECK_FALSE(contains(out.out + out.err, "report.html"));
  CHECK(contains(out.out, "\"displayTimeUnit\""));  // both written, after the run's lines
  CHECK(contains(out.out, "\"bottleneck\""));
}

TEST_CASE("the machine cache is an input of every command with an output") {
  TempDir dir;
  fs::create_directories(dir / "cache");
  std::ofstream(dir / "cache" / "machine.json") << "{}";
  const std::string env = "PRISM_MACHINE_CACHE='" + (dir / "cache" / "machine.json").string() + "'";
  for (const char* args :
       {"machine --json cache/machine.json", "lab relu --json cache/machine.json",
        "train mlp --data spirals --steps 1 --json cache/machine.json"}) {
    CAPTURE(args);
    const RunResult r = run_prism(args, dir.path(), env);
    CHECK(r.code == 2);
    CHECK_MESSAGE(contains(r.err, "is the input the machine cache"), r.err);
    CHECK(read_file(dir / "cache" / "machine.json") == "{}");
  }
}

TEST_CASE("inputs that do not exist are no files to protect: the command reports them") {
  TempDir dir;
  // The built-in text set is not a file named "text"; a missing --load is reported as missing.
  const RunResult text = run_prism(
      "train transformer --data text --steps 1 --batch 2 --block 16 --save text", dir.path());
  CHECK_MESSAGE(text.code == 0, text.err);
  const RunResult missing =
      run_prism("train mlp --data spirals --load nosuch.st --save nosuch.st", dir.path());
  CHECK(missing.code == 1);
  CHECK_FALSE(contains(missing.err, "destroy"));
  CHECK(contains(missing.err, "nosuch.st"));
}

TEST_CASE("a data set's files and the course's progress file are inputs too") {
  TempDir dir;
  // A directory of MNIST-format files: each of the four is an input (stand-ins: the check runs
  // before anything is read).
  fs::create_directory(dir / "d");
  for (const char* f : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                        "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"}) {
    std::ofstream(dir / "d" / f) << "x";
  }
  const RunResult data =
      run_prism("train mlp --data d --steps 1 --json d/t10k-labels-idx1-ubyte", dir.path());
  CHECK(data.code == 2);
  CHECK_MESSAGE(contains(data.err, "is the input --data's test labels"), data.err);
  CHECK(read_file(dir / "d" / "t10k-labels-idx1-ubyte") == "x");
  // The learner's record: `prism course --json` must not replace it.
  const std::string env = "PRISM_COURSE_DIR='" + dir.path().string() + "'";
  std::ofstream(dir / "progress.json") << "{}";
  const RunResult course = run_prism("course --json progress.json", dir.path(), env);
  CHECK(course.code == 2);
  CHECK_MESSAGE(contains(course.err, "is the input the progress file"), course.err);
  CHECK(read_file(dir / "progress.json") == "{}");
}

TEST_CASE("a trace's page that replaces a file says so") {
  TempDir dir;
  std::ofstream(dir / "report.html") << "an older page\n";
  const RunResult r = run_prism("train mlp --data spirals --steps 2 --trace t.json", dir.path());
  REQUIRE(r.code == 0);
  CHECK(contains(r.out, "note: --trace writes its page to report.html, replacing the file there"));
  const RunResult fresh = run_prism(
      "train mlp --data spirals --steps 2 --trace sub.json --report new.html", dir.path());
  CHECK(fresh.code == 0);
  CHECK_FALSE(contains(fresh.out, "replacing"));
}

TEST_CASE("every command is placed, and every file flag of the pairing commands is in a table") {
  const RunResult help = run_prism("--help", fs::temp_directory_path());
  REQUIRE(help.code == 0);
  const size_t at = help.out.find("Subcommands:");
  REQUIRE(at != std::string::npos);
  std::set<std::string> listed;
  std::istringstream lines(help.out.substr(at));
  std::string line;
  std::getline(lines, line);
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string name;
    if (words >> name) listed.insert(name);
  }
  std::set<std::string> placed = kInTables;
  placed.insert(kNoPair.begin(), kNoPair.end());
  CHECK(listed == placed);

  // A flag whose value is a file (FILE, NAME|PATH or DIR in the help): each of a command in the
  // tables appears in one of its rows; a command outside them has at most one, an output.
  std::vector<std::string> rows;
  for (const Entry& e : kInputOutput) rows.push_back(e.args);
  for (const Pair& p : kOutputOutput) rows.push_back(p.args);
  for (const std::string& command : listed) {
    CAPTURE(command);
    const RunResult h = run_prism(command + " --help", fs::temp_directory_path());
    REQUIRE(h.code == 0);
    std::vector<std::string> file_flags;
    std::istringstream help_lines(h.out);
    while (std::getline(help_lines, line)) {
      std::istringstream words(line);
      std::string flag, type;
      if (!(words >> flag >> type) || flag.rfind("-", 0) != 0) continue;
      if (type.rfind("FILE", 0) == 0 || type == "NAME|PATH" || type == "DIR") {
        file_flags.push_back(flag.substr(flag.find("--")));
      }
    }
    if (kNoPair.count(command)) {
      CHECK(file_flags.size() <= 1);
      continue;
    }
    for (const std::string& flag : file_flags) {
      CAPTURE(flag);
      if (command == "gate" && flag == "--baselines") continue;  // a directory it reads or updates
      if (command == "course") continue;  // its input is the progress file: the case above
      bool found = false;
      for (const std::string& row : rows) {
        found = found || (row.rfind(command + " ", 0) == 0 && contains(row, flag + " "));
      }
      CHECK(found);
    }
  }
}
