// `prism --version`, `prism ops`, and the top-level usage errors.
#include "cli_run.h"
#include "kernels/gpu_runtime.h"

using namespace prism::cli_test;

TEST_CASE("prism --version names the version, compiler, build type, CUDA and threads") {
  TempDir dir;
  const RunResult r = run_prism("--version", dir.path());
  REQUIRE(r.exited);
  CHECK(r.code == 0);
  CHECK(contains(r.out, "prism 0."));
  CHECK(contains(r.out, "compiler:"));
  CHECK(contains(r.out, "flags:"));
  CHECK(contains(r.out, "build type:"));
  CHECK(contains(r.out, "CUDA:"));
  CHECK(contains(r.out, "GPU:"));
  if (!prism::kernels::gpu::available()) {
    CHECK(
        contains(r.out, "GPU:         none usable (" + prism::kernels::gpu::unavailable_reason()));
  }
  CHECK(contains(r.out, "OpenMP:"));
  CHECK(r.err.empty());
}

TEST_CASE("prism --version reports PRISM_THREADS and a bad value is a usage error") {
  TempDir dir;
  const RunResult one = run_prism("--version", dir.path(), "PRISM_THREADS=1");
  CHECK(one.code == 0);
  CHECK(contains(one.out, "1 thread max"));

  const RunResult bad = run_prism("--version", dir.path(), "PRISM_THREADS=lots");
  REQUIRE(bad.exited);
  CHECK(bad.code == 2);
  CHECK(contains(bad.err, "PRISM_THREADS"));
}

// The lines of one op's block in `prism ops`: from the line starting with its name up to the
// next op's line (continuation lines start with spaces).
std::vector<std::string> op_block(const std::string& table, const std::string& op) {
  std::vector<std::string> block;
  std::istringstream lines(table);
  std::string line;
  bool in_block = false;
  while (std::getline(lines, line)) {
    if (!line.empty() && line[0] != ' ') in_block = line.rfind(op + " ", 0) == 0;
    if (in_block) block.push_back(line);
  }
  return block;
}

bool any_line_has(const std::vector<std::string>& lines, const std::string& a,
                  const std::string& b = "") {
  for (const std::string& l : lines) {
    if (contains(l, a) && contains(l, b)) return true;
  }
  return false;
}

TEST_CASE("prism ops lists matmul with its variants, the chosen one and its cost formula") {
  TempDir dir;
  const RunResult r = run_prism("ops", dir.path());
  REQUIRE(r.exited);
  CHECK(r.code == 0);
  const std::vector<std::string> matmul = op_block(r.out, "matmul");
  REQUIRE(matmul.size() >= 3);  // two variants and the cost line
  CHECK(any_line_has(matmul, " naive ", "naive"));
  // optimized is matmul's default and nothing chose otherwise: it carries the `*`.
  CHECK(any_line_has(matmul, "* optimized", "(default)"));
  CHECK(any_line_has(matmul, "cost:", "2*m*n*k FLOPs"));
  CHECK_FALSE(any_line_has(matmul, "* naive"));
}

TEST_CASE("prism ops marks a variant chosen through PRISM_KERNELS") {
  TempDir dir;
  const RunResult r = run_prism("ops", dir.path(), "PRISM_KERNELS=matmul=naive");
  CHECK(r.code == 0);
  const std::vector<std::string> matmul = op_block(r.out, "matmul");
  CHECK(any_line_has(matmul, "* naive"));
  CHECK_FALSE(any_line_has(matmul, "* optimized"));

  const RunResult bad = run_prism("ops", dir.path(), "PRISM_KERNELS=matmul=nosuch");
  REQUIRE(bad.exited);
  CHECK(bad.code == 2);
  CHECK(contains(bad.err, "PRISM_KERNELS"));
  CHECK(contains(bad.err, "reference"));
}

TEST_CASE("usage errors exit 2 with a message and --help exits 0") {
  TempDir dir;
  SUBCASE("no command prints the help") {
    const RunResult r = run_prism("", dir.path());
    REQUIRE(r.exited);
    CHECK(r.code == 2);
    CHECK(contains(r.err, "Usage"));
    CHECK(contains(r.err, "demo"));
  }
  SUBCASE("an unknown flag") {
    const RunResult r = run_prism("--no-such-flag", dir.path());
    REQUIRE(r.exited);
    CHECK(r.code == 2);
    CHECK(contains(r.err, "--no-such-flag"));
  }
  SUBCASE("an unknown command") {
    const RunResult r = run_prism("frobnicate", dir.path());
    REQUIRE(r.exited);
    CHECK(r.code == 2);
    CHECK(contains(r.err, "unknown command 'frobnicate'"));
  }
  SUBCASE("an unknown flag of a command") {
    const RunResult r = run_prism("demo --no-such-flag", dir.path());
    REQUIRE(r.exited);
    CHECK(r.code == 2);
    CHECK(contains(r.err, "--no-such-flag"));
    CHECK(contains(r.err, "prism demo --help"));
  }
  SUBCASE("a bad value") {
    const RunResult r = run_prism("demo --steps many", dir.path());
    REQUIRE(r.exited);
    CHECK(r.code == 2);
    CHECK(contains(r.err, "--steps"));
    CHECK(contains(r.err, "many"));
  }
  SUBCASE("--help") {
    const RunResult r = run_prism("--help", dir.path());
    CHECK(r.code == 0);
    CHECK(contains(r.out, "demo"));
    CHECK(contains(r.out, "ops"));
  }
}
