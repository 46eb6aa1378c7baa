// prism_docs_check: the commands a README documents, run; the output it quotes, checked. Each
// command of each ```sh block runs (cheaper: cheap_rules.h) in a scratch directory shared by
// the file's commands, as a reader would run them one after another; it must exit 0, and every
// line of an expected-output block (doc_blocks.h, expect_match.h) must appear in what its
// commands printed. One call per markdown file; exit 0 when all held, 1 otherwise.
//
//   prism_docs_check --source DIR --work DIR --bin prism=PATH [--bin NAME=PATH ...] FILE.md
//   prism_docs_check --rules        the flag rules and the skip list
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/docs/cheap_rules.h"
#include "tests/docs/doc_blocks.h"
#include "tests/docs/expect_match.h"
#include "tests/docs/shell_words.h"

namespace fs = std::filesystem;
using namespace prism::docs_check;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Run {
  int code = -1;  // -1: killed by a signal or not started
  std::string out, err;
  double seconds = 0;
};

// Runs `command` with sh in `dir`, stdin empty, stdout and stderr to files read back after.
Run run_in(const std::string& command, const fs::path& dir) {
  const fs::path out = dir / ".docs_check_stdout", err = dir / ".docs_check_stderr";
  const std::string script = "cd " + shell_quote(dir.string()) + " && (\n" + command +
                             "\n) < /dev/null > " + shell_quote(out.string()) + " 2> " +
                             shell_quote(err.string());
  const auto t0 = std::chrono::steady_clock::now();
  const int status = std::system(script.c_str());
  Run r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (status != -1 && WIFEXITED(status)) r.code = WEXITSTATUS(status);
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

// The last `n` lines of text, each indented, for a failure's context.
std::string tail(const std::string& text, size_t n) {
  const std::vector<std::string> lines = output_lines(text);
  std::string s;
  for (size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i) {
    s += "    | " + lines[i] + "\n";
  }
  return s;
}

std::string indent(const std::string& text, const std::string& pad) {
  std::string s = pad;
  for (char c : text) s += c == '\n' ? "\n" + pad : std::string(1, c);
  return s;
}

struct Options {
  Setup setup;
  fs::path work;
  std::vector<std::string> files;
  bool rules = false;
};

bool parse_args(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--rules") {
      o.rules = true;
    } else if (a == "--source") {
      o.setup.source_dir = value();
    } else if (a == "--work") {
      o.work = value();
    } else if (a == "--bin") {
      const std::string b = value();
      const size_t eq = b.find('=');
      if (eq == std::string::npos) return false;
      o.setup.bins[b.substr(0, eq)] = b.substr(eq + 1);
    } else if (!a.empty() && a[0] != '-') {
      o.files.push_back(a);
    } else {
      return false;
    }
  }
  return o.rules || (!o.setup.source_dir.empty() && !o.work.empty() && !o.files.empty());
}

// Runs one markdown file's commands and checks its expectations; the number of failures.
int check_file(const std::string& file, const Options& o) {
  const fs::path path = fs::path(o.setup.source_dir) / file;
  if (!fs::exists(path)) {
    std::cout << file << ": no such file under " << o.setup.source_dir << "\n";
    return 1;
  }
  const DocFile doc = parse_doc(read_file(path));
  int failures = 0;
  for (const std::string& e : doc.errors) {
    std::cout << file << ": " << e << "\n";
    ++failures;
  }
  // One scratch directory for the file: later commands read what earlier ones wrote (base.json).
  const fs::path work = o.work;
  fs::remove_all(work);
  fs::create_directories(work);
  // Nothing of the reader's machine state is read or written: the machine cache and the course
  // progress live in the scratch directory, and a PRISM_KERNELS choice does not leak in.
  setenv("PRISM_MACHINE_CACHE", (work / "machine.json").c_str(), 1);
  setenv("PRISM_COURSE_DIR", (work / "course").c_str(), 1);
  unsetenv("PRISM_KERNELS");
  // `mpirun` commands (module 13) are written as a reader runs them, without
  // --allow-run-as-root; Open MPI refuses to start as root without it or these two variables,
  // and CI containers often run as root. Open MPI reads them only when run as root.
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);

  int ran = 0, skipped = 0, checked = 0;
  double seconds = 0;
  for (const DocBlock& block : doc.blocks) {
    std::string output;  // every run command's stdout, then stderr, in order
    int block_ran = 0;
    for (const DocCommand& c : block.commands) {
      std::cout << file << ":" << c.line << ": " << c.text << "\n";
      const Plan plan = plan_command(c.text, o.setup);
      if (!plan.run) {
        std::cout << "  skipped: " << plan.skip_reason << "\n";
        ++skipped;
        continue;
      }
      if (!plan.changes.empty()) {
        std::cout << "  cheaper:";
        for (size_t i = 0; i < plan.changes.size(); ++i) {
          std::cout << (i ? ";" : "") << " " << plan.changes[i];
        }
        std::cout << "\n";
      }
      std::cout.flush();  // a command that hangs shows which one it was
      const Run r = run_in(plan.command, work);
      seconds += r.seconds;
      ++ran, ++block_ran;
      output += r.out + "\n" + r.err + "\n";
      char timing[64];
      std::snprintf(timing, sizeof timing, "%.1f s", r.seconds);
      if (r.code == 0) {
        std::cout << "  ok (" << timing << ")\n";
        continue;
      }
      ++failures;
      std::cout << "  FAILED: exit "
                << (r.code < 0 ? std::string("by a signal") : std::to_string(r.code)) << " ("
                << timing << ")\n  ran: " << plan.command << "\n  stdout (end):\n"
                << tail(r.out, 25) << "  stderr (end):\n"
                << tail(r.err, 25);
    }
    const std::vector<std::string> lines = output_lines(output);
    for (const Expectation& e : block.expectations) {
      std::cout << file << ":" << e.line << ": expected output (" << e.lines.size() << " lines";
      if (!e.until.empty()) std::cout << ", up to \"" << e.until << "\"";
      std::cout << ")\n";
      if (block_ran == 0) {
        std::cout << "  skipped: its commands were skipped\n";
        continue;
      }
      ++checked;
      std::vector<Missing> missing;
      try {
        missing = missing_lines(e.lines, e.until, lines);
      } catch (const std::exception& ex) {
        std::cout << "  FAILED: " << ex.what() << "\n";
        ++failures;
        continue;
      }
      if (missing.empty()) {
        std::cout << "  ok\n";
        continue;
      }
      ++failures;
      for (const Missing& m : missing) {
        std::cout << "  FAILED: " << file << ":" << e.first_line + static_cast<int>(m.index)
                  << ": no output line matches: " << trim(m.line) << "\n    (pattern: " << m.pattern
                  << ")\n";
      }
      std::cout << "  the output of its commands:\n" << indent(output, "    | ") << "\n";
    }
  }
  std::cout << "\n"
            << file << ": " << ran << " commands run, " << skipped << " skipped, " << checked
            << " expected outputs checked, " << static_cast<int>(seconds + 0.5) << " s: "
            << (failures ? "FAILED (" + std::to_string(failures) + ")" : std::string("ok")) << "\n";
  if (failures == 0)
    fs::remove_all(work);  // kept on failure, to look at
  else
    std::cout << "the scratch directory is kept: " << work.string() << "\n";
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse_args(argc, argv, o)) {
    std::cerr
        << "usage: prism_docs_check --source DIR --work DIR --bin prism=PATH [--bin NAME=PATH "
           "...] FILE.md...\n       prism_docs_check --rules\n";
    return 2;
  }
  if (o.rules) {
    std::cout << describe_rules();
    return 0;
  }
  int failures = 0;
  for (const std::string& f : o.files) failures += check_file(f, o);
  return failures ? 1 : 0;
}
