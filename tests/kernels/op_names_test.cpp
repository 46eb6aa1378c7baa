// An op's name is typed in one place: its definition, kernels/ops/<op>/op.h (and, for the
// elementwise family, the list beside it). Everywhere else in the libraries it is named by the
// definition (kernels::ops::rms_norm.name, detail::OpHandle op(kernels::ops::rms_norm)), so a
// renamed or removed op fails to compile instead of leaving a string that matches nothing.
//
// This test reads the sources of the libraries (kernels, tensor, nn, analysis, cli, profiler),
// comments left out, and fails on any string literal that is exactly an op's name outside the
// op's own folder. The tests, benchmarks, exercises and examples name ops as a learner would
// (kernels::Use use("matmul", "naive")) and are not read. A few words are op names and also
// something else; each such use is listed below with what it is.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/op_def.h"

namespace prism::kernels {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The string literals of C++ source text, comments skipped (character literals too, so '"' is
// not taken for the start of a string).
std::vector<std::string> string_literals(const std::string& s) {
  std::vector<std::string> out;
  size_t i = 0;
  const size_t n = s.size();
  auto skip_quoted = [&](char q) {
    size_t j = i + 1;
    while (j < n && s[j] != q) j += s[j] == '\\' ? 2 : 1;
    return j;
  };
  while (i < n) {
    if (s.compare(i, 2, "//") == 0) {
      const size_t j = s.find('\n', i);
      i = j == std::string::npos ? n : j;
    } else if (s.compare(i, 2, "/*") == 0) {
      const size_t j = s.find("*/", i + 2);
      i = j == std::string::npos ? n : j + 2;
    } else if (s[i] == '"') {
      const size_t j = skip_quoted('"');
      out.push_back(s.substr(i + 1, j - i - 1));
      i = j + 1;
    } else if (s[i] == '\'') {
      i = skip_quoted('\'') + 1;
    } else {
      ++i;
    }
  }
  return out;
}

// Words that are op names and, in these files, something else.
struct OtherMeaning {
  const char* file;
  const char* word;
  const char* what;
};
constexpr OtherMeaning kOtherMeanings[] = {
    {"analysis/bench_report.cpp", "max", "a latency column: the slowest call"},
    {"analysis/bench_report.cpp", "mean", "a latency column: the mean call"},
    {"cli/train_report.cpp", "max", "a JSON key of a timing summary"},
    {"profiler/statistics.cpp", "mean", "the statistic, named in its error"},
    {"kernels/op_def.cpp", "matmul", "the op class, named after its main op"},
    {"kernels/op_def.cpp", "attention", "the op class, named after its main op"},
    {"analysis/html/models_view.cpp", "matmul", "the op class, in the report's order"},
    {"analysis/html/models_view.cpp", "attention", "the op class, in the report's order"},
    {"nn/dist/comm.h", "gather", "MPI's collective, in an error"},
    {"tensor/ops/norm.cpp", "mean", "layer_norm's saved row means"},
    {"kernels/ops/layer_norm/opinfo.cpp", "mean", "layer_norm's output of row means"},
    {"nn/models/resnet.cpp", "relu", "a module's name, as torchvision names it"},
};

TEST_CASE("op names: a string literal only in the op's own folder") {
  const fs::path root = PRISM_SOURCE_DIR;
  // Each op's folder, from the definitions' text (`.name = "rms_norm"` in kernels/ops/F/op.h).
  std::map<std::string, std::string> folder_of;
  const std::regex name_field(R"re(\.name = "(\w+)")re");
  for (const auto& dir : fs::directory_iterator(root / "kernels" / "ops")) {
    const std::string text = read(dir.path() / "op.h");
    for (std::sregex_iterator m(text.begin(), text.end(), name_field), end; m != end; ++m) {
      folder_of[(*m)[1]] = "kernels/ops/" + dir.path().filename().string() + "/";
    }
  }
  // Every op in the list has its folder.
  for (const OpDef* d : op_defs()) CHECK_MESSAGE(folder_of.count(d->name) == 1, d->name);
  REQUIRE(folder_of.size() == op_defs().size());

  std::set<std::pair<std::string, std::string>> allowed, allowance_used;
  for (const OtherMeaning& o : kOtherMeanings) allowed.insert({o.file, o.word});
  int files = 0;
  for (const char* layer : {"kernels", "tensor", "nn", "analysis", "cli", "profiler"}) {
    for (const auto& e : fs::recursive_directory_iterator(root / layer)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".h" && ext != ".cpp" && ext != ".cu" && ext != ".cuh")) {
        continue;
      }
      const std::string rel = fs::relative(e.path(), root).generic_string();
      ++files;
      for (const std::string& lit : string_literals(read(e.path()))) {
        const auto it = folder_of.find(lit);
        if (it == folder_of.end() || rel.rfind(it->second, 0) == 0) continue;
        if (allowed.count({rel, lit})) {
          allowance_used.insert({rel, lit});
          continue;
        }
        FAIL_CHECK(rel << ": the op name \"" << lit << "\" typed as a string; name it by its "
                       << "definition, kernels::ops::" << lit << ".name (" << it->second
                       << "op.h)");
      }
    }
  }
  CHECK(files > 300);  // the libraries were found and read
  // An allowance nothing needs any more is removed, so the list stays true.
  for (const OtherMeaning& o : kOtherMeanings) {
    CHECK_MESSAGE(allowance_used.count({o.file, o.word}) == 1, o.file, " no longer uses \"", o.word,
                  "\": drop it from kOtherMeanings");
  }
}

TEST_CASE("op names: the scanner skips comments and character literals") {
  const auto lits = string_literals(
      "f(\"sum\"); // \"max\"\n/* \"mean\" */ char q = '\"'; g(\"a\\\"b\", \"exp\");");
  CHECK(lits == std::vector<std::string>{"sum", "a\\\"b", "exp"});
}

}  // namespace
}  // namespace prism::kernels
