// The rules: each flag rule names the prism commands it applies to, the flag, what it does and
// why; each skip rule what it matches and why such a command cannot run in the test suite.
// The caps keep most commands under a second (tests/docs/README.md has the slow ones and the
// total); the structure of the output (its columns, row labels and words) does not depend on
// them, only its numbers and units, which the expected-output patterns allow for.
#include "tests/docs/cheap_rules.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <regex>
#include <sstream>

#include "tests/docs/shell_words.h"

namespace prism::docs_check {

namespace {

enum class Act {
  AtMost,    // a given value above `value` becomes `value`
  Cap,       // as AtMost, and `flag value` is added when the flag is not given
  Add,       // `flag` (a switch) is added when not given
  Replace,   // `flag N` becomes the words of `value`
  Smallest,  // a list of sizes becomes its smallest size
};

struct FlagRule {
  const char* commands;  // prism subcommands, space-separated
  const char* flag;
  Act act;
  const char* value;
  const char* unless;  // the rule does nothing when one of these flags is given
  const char* why;
};

// clang-format off
const FlagRule kFlagRules[] = {
  {"train",   "--steps",         Act::Cap,      "8",  "--epochs", "the profiled window starts after 5 warm-up steps, so 8 still profiles 3"},
  {"train",   "--epochs",        Act::Replace,  "--steps 8", "", "one epoch of Fashion-MNIST is 468 steps"},
  {"train",   "--profile-steps", Act::AtMost,   "2",  "", "a short profiled window has the same rows"},
  {"demo",    "--steps",         Act::Cap,      "8",  "", "the demo trains 300 steps by default"},
  {"lab",     "--sizes",         Act::Smallest, "",   "", "the smallest size of the list (fewest elements)"},
  {"lab",     "--reps",          Act::Cap,      "3",  "", "3 timed samples per variant and size"},
  {"lab",     "--min-sample-ms", Act::Cap,      "2",  "", "short samples"},
  {"lab",     "--max-seconds",   Act::Cap,      "1",  "", "a slow variant (naive at a large default size) is skipped after 1 s"},
  {"lab bench compare models sweep", "--no-peak", Act::Add, "", "", "never measure the machine's peaks: seconds, and STREAM arrays of up to 1 GiB each"},
  {"bench",   "--duration",      Act::Cap,      "0.05", "--iters --qps", "50 ms of timed calls per batch size"},
  {"bench",   "--duration",      Act::Cap,      "0.3", "--iters", "a server run (--qps) needs a few hundred requests per rate for its batch sizes"},
  {"bench",   "--iters",         Act::AtMost,   "20", "", "20 timed calls per batch size"},
  {"compare", "--duration",      Act::Cap,      "0.1", "", "100 ms per side and batch size, over the rounds"},
  {"models",  "--duration",      Act::Cap,      "0.05", "", "50 ms of timed calls per model, mode and round (at least 3 calls)"},
  {"models",  "--rounds",        Act::Cap,      "2",  "", "2 interleaved rounds still rotate the order"},
  {"models",  "--batch",         Act::Cap,      "8",  "", "a transformer's training step at batch 32 takes 0.2 s a call"},
  {"sweep",   "--duration",      Act::Cap,      "0.05", "", "50 ms per point over both passes (at least 10 calls)"},
  {"sweep",   "--warmup",        Act::Cap,      "1",  "", "1 warm call per point and pass"},
  {"machine", "--reps",          Act::Cap,      "3",  "", "with --fma-ms and --stream-mib: a quick measurement, which is never cached"},
  {"machine", "--fma-ms",        Act::Cap,      "5",  "", "(so the test never writes the machine cache)"},
  {"machine", "--stream-mib",    Act::Cap,      "16", "", "16 MiB arrays instead of 4 x L3 (up to 1 GiB each)"},
  // `bench collectives` (under mpirun) has flags of its own, none of `bench MODEL`'s.
  {"collectives", "--reps",      Act::Cap,      "5",  "", "bench collectives: 5 timed allreduces per size instead of 20 (all sizes, up to 64 MiB: under a second)"},
  {"collectives", "--warmup",    Act::Cap,      "1",  "", "bench collectives: 1 untimed allreduce per size"},
  {"collectives", "--duration",  Act::Cap,      "0.05", "", "bench collectives --predict: 50 ms of training steps per measurement (unused without --predict)"},
};
// clang-format on

enum class Match { Program, Subcommand, Flag };
struct SkipRule {
  Match match;
  const char* what;  // Program: the program's file name; Subcommand: prism's; Flag: "--flag value"
  const char* why;
};

// clang-format off
const SkipRule kSkipRules[] = {
  {Match::Flag,       "--device cuda", "needs a GPU (tests/cuda checks the CUDA kernels where there is one)"},
  {Match::Subcommand, "check",   "builds an exercise's program with cmake --build (each exercise's ctest entries run its checker)"},
  {Match::Program,    "make",    "builds the project: this test runs inside a build"},
  {Match::Program,    "cmake",   "builds the project: this test runs inside a build"},
  {Match::Program,    "ctest",   "runs the test suite, which this test is part of"},
  {Match::Program,    "python3", "needs Python (and PyTorch), which the C++ build does not"},
  {Match::Program,    "python",  "needs Python (and PyTorch), which the C++ build does not"},
  {Match::Program,    "nsys",    "needs NVIDIA Nsight Systems and a GPU"},
};
// clang-format on

const char* kNotBuilt = "is not built by default (prism_with_NAME: `prism check NAME` builds it)";
const char* kNotPrism = "not a prism command";
const char* kOversubscribe =
    "--oversubscribe: a machine with fewer cores than ranks refuses to start them without it";

std::vector<std::string> split_on(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) {
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

bool listed(const char* list, const std::string& word) {
  const std::vector<std::string> items = split_on(list, ' ');
  return std::find(items.begin(), items.end(), word) != items.end();
}

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool is_assignment(const std::string& w) {
  static const std::regex re("^[A-Za-z_][A-Za-z0-9_]*=.*");
  return std::regex_match(w, re);
}

// The number of elements a lab size names: the product of its numbers before any ':' suffix
// (1024, 128x784x256:nt, 1x8x4096x64:causal).
double elements(const std::string& size) {
  double n = 1;
  static const std::regex num("[0-9]+");
  const std::string dims = size.substr(0, size.find(':'));
  for (std::sregex_iterator it(dims.begin(), dims.end(), num), end; it != end; ++it) {
    n *= std::stod(it->str());
  }
  return n;
}

std::string smallest_size(const std::string& list) {
  std::string best;
  double best_n = std::numeric_limits<double>::infinity();
  for (const std::string& s : split_on(list, ',')) {
    if (const double n = elements(s); n < best_n) best = s, best_n = n;
  }
  return best.empty() ? list : best;
}

// One command between operators: its words, the index of its program (after VAR=value words).
// A command an MPI launcher starts is a segment of its own (`launched`): the words before its
// program are the launcher and its options (`mpirun -np 2`), or a later app context's (`: -np 1`).
struct Segment {
  std::vector<Word> words;
  size_t program = 0;
  bool launched = false;
  std::string prog() const { return program < words.size() ? words[program].value : ""; }
};

// `mpirun -np 2 build/prism train mlp --ddp` starts build/prism on 2 ranks: the rules look past
// the launcher to the command it starts, at the first build/NAME after it (the words between are
// the launcher's options), and past each `:` to the next (Open MPI's app contexts: `mpirun -np 1 A
// : -np 1 B` runs A on rank 0 and B on rank 1). Without a build/NAME the segment runs nothing the
// test knows (kNotPrism).
bool is_launcher(const std::string& prog) {
  const std::string b = base_name(prog);
  return b == "mpirun" || b == "mpiexec";
}

// A launcher's segment as one segment per app context, each `:` appended to `joins` between them.
// Adds --oversubscribe after the launcher when not given (kOversubscribe).
std::vector<Segment> split_launch(Segment s, std::vector<Word>& joins,
                                  std::vector<std::string>& changes) {
  bool given = false;
  for (const Word& w : s.words) given = given || w.value == "--oversubscribe";
  if (!given) {
    s.words.insert(s.words.begin() + static_cast<std::ptrdiff_t>(s.program) + 1,
                   Word{"--oversubscribe", "--oversubscribe", false});
    changes.push_back("added --oversubscribe");
  }
  std::vector<Segment> apps;
  Segment app;
  app.launched = true;
  bool found = false;
  auto close = [&] {
    if (!found) app.program = app.words.size();  // no build/NAME: prog() is ""
    apps.push_back(app);
    app = Segment{};
    app.launched = true;
    found = false;
  };
  for (size_t i = 0; i < s.words.size(); ++i) {
    const Word& w = s.words[i];
    if (i > s.program && w.value == ":") {
      close();
      joins.push_back(w);
      continue;
    }
    if (!found && i > s.program && w.value.rfind("build/", 0) == 0) {
      app.program = app.words.size();
      found = true;
    }
    app.words.push_back(w);
  }
  close();
  return apps;
}

// Applies the flag rules to a prism segment whose subcommand is `sub`.
void apply_flag_rules(Segment& seg, const std::string& sub, std::vector<std::string>& changes) {
  std::vector<Word>& w = seg.words;
  auto find_flag = [&](const std::string& flag) -> std::ptrdiff_t {
    for (size_t i = seg.program + 1; i < w.size(); ++i) {
      if (w[i].value == flag || w[i].value.rfind(flag + "=", 0) == 0) {
        return static_cast<std::ptrdiff_t>(i);
      }
    }
    return -1;
  };
  for (const FlagRule& r : kFlagRules) {
    if (!listed(r.commands, sub)) continue;
    const std::string flag = r.flag;
    bool excused = false;
    for (const std::string& u : split_on(r.unless, ' ')) excused = excused || find_flag(u) >= 0;
    if (excused) continue;
    const std::ptrdiff_t at = find_flag(flag);
    if (at < 0) {
      if (r.act != Act::Cap && r.act != Act::Add) continue;
      w.push_back({flag, flag, false});
      if (r.act == Act::Cap) w.push_back({r.value, r.value, false});
      changes.push_back("added " + flag + (r.act == Act::Cap ? " " + std::string(r.value) : ""));
      continue;
    }
    if (r.act == Act::Add) continue;
    // The value: the next word, or the text after '=' in the same word.
    const size_t i = static_cast<size_t>(at);
    const bool joined = w[i].value.size() > flag.size();
    if (!joined && i + 1 >= w.size()) continue;
    const std::string old = joined ? w[i].value.substr(flag.size() + 1) : w[i + 1].value;
    std::string now = old;
    if (r.act == Act::AtMost || r.act == Act::Cap) {
      char* end = nullptr;
      const double v = std::strtod(old.c_str(), &end);
      if (end != old.c_str() && *end == '\0' && v > std::strtod(r.value, nullptr)) now = r.value;
    } else if (r.act == Act::Smallest) {
      now = smallest_size(old);
    } else if (r.act == Act::Replace) {
      std::vector<Word> with;
      for (const std::string& s : split_on(r.value, ' ')) with.push_back({s, s, false});
      w.erase(w.begin() + at, w.begin() + at + (joined ? 1 : 2));
      w.insert(w.begin() + at, with.begin(), with.end());
      changes.push_back(flag + " " + old + " -> " + r.value);
      continue;
    }
    if (now == old) continue;
    if (joined) {
      w[i] = {flag + "=" + now, flag + "=" + now, false};
    } else {
      w[i + 1] = {now, now, false};
    }
    changes.push_back(flag + " " + old + " -> " + now);
  }
}

std::string skip_reason(const std::vector<Segment>& segs, const Setup& setup) {
  for (size_t k = 0; k < segs.size(); ++k) {
    const Segment& s = segs[k];
    const std::string prog = s.prog();
    for (const SkipRule& r : kSkipRules) {
      if (r.match == Match::Program && base_name(prog) == r.what) return r.why;
    }
    if (prog.rfind("build/", 0) != 0) {
      if (k == 0 || s.launched) return kNotPrism;
      continue;
    }
    if (!setup.bins.count(prog.substr(6))) return prog + " " + kNotBuilt;
    for (const SkipRule& r : kSkipRules) {
      if (r.match == Match::Subcommand && s.program + 1 < s.words.size() &&
          s.words[s.program + 1].value == r.what) {
        return r.why;
      }
      if (r.match == Match::Flag) {
        const std::vector<std::string> fv = split_on(r.what, ' ');
        for (size_t i = s.program + 1; i < s.words.size(); ++i) {
          const std::string& v = s.words[i].value;
          const bool pair = v == fv[0] && i + 1 < s.words.size() && s.words[i + 1].value == fv[1];
          if (pair || v == fv[0] + "=" + fv[1]) return r.why;
        }
      }
    }
  }
  return "";
}

}  // namespace

Plan plan_command(const std::string& doc_command, const Setup& setup) {
  Plan plan;
  std::vector<Word> words;
  try {
    words = split_words(doc_command);
  } catch (const std::exception& e) {
    plan.skip_reason = std::string("cannot read the command: ") + e.what();
    return plan;
  }
  // The segments between operators, and the operators themselves.
  std::vector<Segment> segs(1);
  std::vector<Word> ops;
  for (const Word& w : words) {
    if (w.op) {
      ops.push_back(w);
      segs.emplace_back();
    } else {
      segs.back().words.push_back(w);
    }
  }
  for (Segment& s : segs) {
    while (s.program < s.words.size() && is_assignment(s.words[s.program].value)) ++s.program;
    // `time` is a keyword of bash but a program (often not installed) for sh; the test times
    // every command itself.
    if (s.prog() == "time") {
      s.words.erase(s.words.begin() + static_cast<std::ptrdiff_t>(s.program));
      plan.changes.push_back("dropped time");
    }
  }
  // Each launcher's segment split into the commands it starts; `joins` are the words between
  // segments: the operators, and the launchers' `:`.
  std::vector<Segment> expanded;
  std::vector<Word> joins;
  for (size_t k = 0; k < segs.size(); ++k) {
    if (k > 0) joins.push_back(ops[k - 1]);
    if (!is_launcher(segs[k].prog())) {
      expanded.push_back(segs[k]);
      continue;
    }
    for (Segment& app : split_launch(segs[k], joins, plan.changes)) expanded.push_back(app);
  }
  segs = std::move(expanded);
  ops = std::move(joins);
  plan.skip_reason = skip_reason(segs, setup);
  if (!plan.skip_reason.empty()) return plan;

  std::vector<Word> out;
  for (size_t k = 0; k < segs.size(); ++k) {
    Segment& s = segs[k];
    const std::string prog = s.prog();
    if (k > 0 && ops[k - 1].raw == "|" && (prog == "less" || prog == "more")) {
      out.pop_back();  // the pipe: with no terminal, a pager only copies its input
      plan.changes.push_back("dropped | " + prog);
      if (k < ops.size()) out.push_back(ops[k]);
      continue;
    }
    if (prog.rfind("build/", 0) == 0) {
      const std::string sub = s.program + 1 < s.words.size() ? s.words[s.program + 1].value : "";
      const bool json_inputs =
          s.program + 2 < s.words.size() && s.words[s.program + 2].value.size() > 5 &&
          s.words[s.program + 2].value.rfind(".json") == s.words[s.program + 2].value.size() - 5;
      const std::string sub2 = s.program + 2 < s.words.size() ? s.words[s.program + 2].value : "";
      if (prog == "build/prism") {
        const std::string rules_for = sub == "compare" && json_inputs           ? "compare files"
                                      : sub == "bench" && sub2 == "collectives" ? "collectives"
                                                                                : sub;
        apply_flag_rules(s, rules_for, plan.changes);
      }
      const std::string bin = setup.bins.at(prog.substr(6));
      s.words[s.program] = {shell_quote(bin), bin, false};
      for (size_t i = s.program + 1; i < s.words.size(); ++i) {
        const std::string& v = s.words[i].value;
        if (v.empty() || v[0] == '-' || v.find('/') == std::string::npos) continue;
        const std::filesystem::path p = std::filesystem::path(setup.source_dir) / v;
        if (std::filesystem::exists(p)) s.words[i] = {shell_quote(p.string()), p.string(), false};
      }
    }
    out.insert(out.end(), s.words.begin(), s.words.end());
    if (k < ops.size()) out.push_back(ops[k]);
  }
  plan.run = true;
  plan.command = join_words(out);
  return plan;
}

std::string describe_rules() {
  std::string s = "flag rules (prism commands):\n";
  for (const FlagRule& r : kFlagRules) {
    std::string what;
    switch (r.act) {
      case Act::AtMost:
        what = std::string("at most ") + r.value;
        break;
      case Act::Cap:
        what = std::string("at most ") + r.value + ", " + r.value + " when not given";
        break;
      case Act::Add:
        what = "added when not given";
        break;
      case Act::Replace:
        what = std::string("becomes ") + r.value;
        break;
      case Act::Smallest:
        what = "the smallest size";
        break;
    }
    if (*r.unless) what += std::string(" (not with ") + r.unless + ")";
    s += "  " + std::string(r.commands) + " " + r.flag + ": " + what + ". " + r.why + "\n";
  }
  s += "always: build/NAME -> the built binary; `time` and `| less` dropped; paths in the source "
       "tree made absolute\n";
  s += "mpirun/mpiexec: the rules apply to each build/NAME it starts (after its options and after "
       "each `:`); ";
  s += std::string(kOversubscribe) + ", so it is added\n";
  s += "skipped:\n";
  for (const SkipRule& r : kSkipRules) {
    const char* kind = r.match == Match::Program      ? "program"
                       : r.match == Match::Subcommand ? "prism"
                                                      : "flag";
    s += "  " + std::string(kind) + " " + r.what + ": " + r.why + "\n";
  }
  s += std::string("  build/NAME the test was not given: ") + kNotBuilt + "\n";
  s += std::string("  any other program: ") + kNotPrism + "\n";
  return s;
}

}  // namespace prism::docs_check
