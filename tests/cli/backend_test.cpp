// The CUDA backend library from the command's side: a CPU run never loads it (so cudart and
// cuBLAS do not inflate its resident memory), a GPU query does, `prism ops` lists its kernels,
// and a backend that cannot be loaded makes `--device cuda` a run-time error with the reason.
//
// Which libraries a run loaded is read from the dynamic loader's own log (glibc's
// LD_DEBUG=files, written to files named by LD_DEBUG_OUTPUT): every library opened, at start-up
// or by dlopen, is named there.
#include <filesystem>

#include "cli_run.h"
#include "kernels/gpu_runtime.h"

using namespace prism::cli_test;

namespace {

// Runs prism with the loader's log on; returns the run and everything the log says.
std::pair<RunResult, std::string> run_logged(const std::string& args, const TempDir& dir,
                                             const std::string& env = "") {
  const fs::path log_dir = dir / "ld";
  fs::create_directories(log_dir);
  const RunResult r = run_prism(args, dir.path(),
                                "LD_DEBUG=files LD_DEBUG_OUTPUT=" + (log_dir / "ld").string() +
                                    (env.empty() ? "" : " " + env));
  std::string log;
  for (const auto& entry : fs::directory_iterator(log_dir)) log += read_file(entry.path());
  fs::remove_all(log_dir);
  return {r, log};
}

bool loads_cuda(const std::string& log) {
  return contains(log, "libcudart") || contains(log, "libcublas") || contains(log, "libprism_cuda");
}

}  // namespace

TEST_CASE("a CPU run loads no CUDA library: not cudart, not cuBLAS, not the backend") {
  TempDir dir;
  for (const char* args :
       {"--help", "train mlp --data spirals --steps 3", "lab --list", "summary mlp"}) {
    INFO(args);
    const auto [r, log] = run_logged(args, dir);
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK(contains(log, "libprism_kernels"));  // the log is there and names libraries
    CHECK_FALSE(loads_cuda(log));
  }
}

TEST_CASE("a GPU query and `prism ops` load the backend (a CUDA build), with or without a GPU") {
  TempDir dir;
  const auto [version, version_log] = run_logged("--version", dir);
  CHECK(version.code == 0);
  const auto [ops, ops_log] = run_logged("ops", dir);
  CHECK(ops.code == 0);
  if (!prism::kernels::gpu::built()) {
    CHECK_FALSE(loads_cuda(version_log));
    CHECK(contains(version.out, "CUDA:        no"));
    return;
  }
  CHECK(contains(version_log, "libprism_cuda"));
  CHECK(contains(version.out, "libprism_cuda"));  // where it was loaded from
  CHECK(contains(ops_log, "libprism_cuda"));
  // The CUDA variants are listed: matmul's GPU-only tiled kernel, on the cuda device.
  CHECK(contains(ops.out, "tiled"));
  CHECK(contains(ops.out, "  cuda  "));
}

TEST_CASE("a backend that cannot be loaded: --device cuda exits 1 with the reason") {
  TempDir dir;
  const std::string env = "PRISM_CUDA_BACKEND=/nonexistent/libprism_cuda.so";
  const RunResult r =
      run_prism("train mlp --data spirals --steps 3 --device cuda", dir.path(), env);
  REQUIRE(r.exited);
  CHECK(r.code == 1);
  CHECK(contains(r.err, "--device cuda: CUDA is not available"));
  if (prism::kernels::gpu::built()) {
    CHECK(contains(r.err, "cannot load the CUDA backend (PRISM_CUDA_BACKEND=/nonexistent/"));
    CHECK(contains(r.err, "No such file or directory"));
    // `prism ops` still lists the CPU, and says why there is no CUDA variant.
    const RunResult ops = run_prism("ops", dir.path(), env);
    CHECK(ops.code == 0);
    CHECK(contains(ops.out, "matmul"));
    CHECK(contains(ops.out, "(no CUDA variants listed: cannot load the CUDA backend"));
    const RunResult version = run_prism("--version", dir.path(), env);
    CHECK(version.code == 0);
    CHECK(contains(version.out, "GPU:         none usable (cannot load the CUDA backend"));
  } else {
    CHECK(contains(r.err, "built without CUDA"));
  }
}

TEST_CASE("--kernel with a GPU-only variant on a CPU run: loads the backend to find it") {
  TempDir dir;
  const RunResult r =
      run_prism("train mlp --data spirals --steps 3 --kernel matmul=tiled", dir.path());
  REQUIRE(r.exited);
  if (prism::kernels::gpu::built()) {
    CHECK(r.code == 0);  // the CPU keeps its default; the choice is for the GPU
  } else {
    CHECK(r.code == 2);
    CHECK(contains(r.err, "tiled"));
  }
}
