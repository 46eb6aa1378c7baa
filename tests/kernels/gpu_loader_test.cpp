// The CUDA backend library is loaded on first GPU use (kernels/gpu_loader.cpp): a CPU-only
// process never maps it, nor cudart or cuBLAS; a GPU query loads it (on a machine without a GPU
// too: cudart loads without a driver) and its kernels join the registry with the choices made
// earlier applied; and every way it can fail to load becomes unavailable_reason(), not a crash.
//
// Loading happens once per process, so each case runs in a fresh child process: this test
// executable again, with an environment and one "child:" test case (as registry_test.cpp does for
// PRISM_KERNELS).
#include <doctest/doctest.h>

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "kernels/gpu_runtime.h"
#include "kernels/registry.h"
#include "profiler/session.h"
#include "tensor/ops.h"
#include "tests/test_util.h"

namespace prism::kernels {
namespace {

using prism::testing::contains;
using prism::testing::error_of;
using prism::testing::run_child;

// What this process has mapped: every shared object appears in /proc/self/maps by its path.
std::string mapped_files() {
  std::ifstream in("/proc/self/maps");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool maps_cuda_libraries(const std::string& maps) {
  return contains(maps, "libcudart") || contains(maps, "libcublas") ||
         contains(maps, "libprism_cuda");
}

const char* child_mode() {
  return std::getenv("PRISM_TEST_LOADER_CHILD");
}

void expect_child(const std::string& env, const std::string& test_case, const std::string& mode) {
  auto [status, out] = run_child("PRISM_TEST_LOADER_CHILD=" + mode + " " + env, test_case);
  INFO(out);
  CHECK(status == 0);
  CHECK(contains(out, "CHILD_DONE " + mode));
}

// ---- a CPU-only process ------------------------------------------------------------------------

TEST_CASE("child: a CPU run maps no CUDA library") {
  if (!child_mode()) return;
  Tensor a = ones({8, 16}), b = ones({16, 4});
  a.set_requires_grad();
  {
    profiler::Session session;  // starting a session resets the GPU timer: no load for that
    Tensor loss = sum(softmax(matmul(a, b)));
    loss.backward();
    (void)session.stop();
  }
  // The calls that only tidy up do not load the backend either.
  gpu::synchronize();
  gpu::release(nullptr, 0);
  gpu::empty_cache();
  (void)gpu::cache_stats();
  gpu::timer_reset();
  CHECK(gpu::timer_begin() == -1);
  gpu::range_push("x");
  gpu::range_pop();
  (void)gpu::built();
  set_variant("matmul", "naive");  // a name the CPU has: nothing to load
  set_variant("matmul", "");
  CHECK_FALSE(gpu::backend_loaded());
  CHECK(gpu::backend_path().empty());
  const std::string maps = mapped_files();
  CHECK(contains(maps, "libprism_kernels"));  // the check can see libraries at all
  CHECK_FALSE(maps_cuda_libraries(maps));
  std::printf("CHILD_DONE cpu\n");
}

TEST_CASE("a CPU-only process does not map cudart, cuBLAS or the CUDA backend") {
  expect_child("", "child: a CPU run maps no CUDA library", "cpu");
}

#ifdef PRISM_HAS_CUDA

// The file libprism_kernels was loaded from (a library that is not a backend).
std::string kernels_library() {
  Dl_info info{};
  REQUIRE(dladdr(reinterpret_cast<void*>(&registry), &info) != 0);
  return info.dli_fname;
}

// ---- the backend loads on a GPU query, and earlier choices apply to its kernels ----------------

TEST_CASE("child: choices made before the backend loads apply to its kernels") {
  if (!child_mode()) return;
  load_env_choices();                  // PRISM_KERNELS=layer_norm=two_pass, set by the parent
  set_variant("softmax", "naive");     // --kernel softmax=naive
  Use scoped("log_softmax", "naive");  // a guard open across the load
  REQUIRE_FALSE(gpu::backend_loaded());
  CHECK(registry().find("softmax", Device::cuda) == nullptr);  // no CUDA kernels yet

  // A GPU query loads the backend, with or without a GPU.
  const bool usable = gpu::available();
  CHECK(gpu::backend_loaded());
  if (!usable) CHECK_FALSE(gpu::unavailable_reason().empty());
  CHECK(contains(gpu::backend_path(), "libprism_cuda"));
  CHECK(contains(mapped_files(), "libprism_cuda"));

  const OpKernels* softmax_cuda = registry().find("softmax", Device::cuda);
  const OpKernels* layer_norm_cuda = registry().find("layer_norm", Device::cuda);
  const OpKernels* log_softmax_cuda = registry().find("log_softmax", Device::cuda);
  const OpKernels* matmul_cuda = registry().find("matmul", Device::cuda);
  REQUIRE(softmax_cuda);
  REQUIRE(layer_norm_cuda);
  REQUIRE(log_softmax_cuda);
  REQUIRE(matmul_cuda);
  CHECK(softmax_cuda->chosen().name == "naive");                           // set_variant
  CHECK(layer_norm_cuda->chosen().name == "two_pass");                     // PRISM_KERNELS
  CHECK(log_softmax_cuda->chosen().name == "naive");                       // Use
  CHECK(matmul_cuda->chosen().name == matmul_cuda->default_entry().name);  // nothing chosen
  CHECK(std::string_view(softmax_cuda->cost_formula()) ==
        registry().at("softmax", Device::cpu).cost_formula());
  // Later choices reach both devices as before.
  set_variant("softmax", "");
  CHECK(softmax_cuda->chosen().name == softmax_cuda->default_entry().name);
  std::printf("CHILD_DONE choices\n");
}

TEST_CASE("a GPU query loads the backend, and choices made earlier apply to the CUDA kernels") {
  expect_child("PRISM_KERNELS=layer_norm=two_pass",
               "child: choices made before the backend loads apply to its kernels", "choices");
}

TEST_CASE("child: a variant only the GPU has loads the backend") {
  if (!child_mode()) return;
  REQUIRE_FALSE(gpu::backend_loaded());
  set_variant("matmul", "tiled");  // the CPU has no "tiled": the backend is loaded to find it
  CHECK(gpu::backend_loaded());
  CHECK(registry().at("matmul", Device::cuda).chosen().name == "tiled");
  const OpKernels& cpu = registry().at("matmul", Device::cpu);
  CHECK(cpu.chosen().name == cpu.default_entry().name);  // the CPU keeps its default
  CHECK_THROWS_WITH_AS(set_variant("matmul", "bogus"), doctest::Contains("tiled"), Error);
  std::printf("CHILD_DONE cuda_only\n");
}

TEST_CASE("a variant only the GPU has, chosen before any GPU use, loads the backend") {
  expect_child("", "child: a variant only the GPU has loads the backend", "cuda_only");
}

// ---- every failure to load is a reason, never a crash ------------------------------------------

TEST_CASE("child: a backend that cannot be loaded gives the reason") {
  if (!child_mode()) return;
  const std::string expect = std::getenv("PRISM_TEST_LOADER_EXPECT");
  CHECK(gpu::built());
  CHECK_FALSE(gpu::available());
  CHECK_FALSE(gpu::load_backend());
  CHECK_FALSE(gpu::backend_loaded());
  const std::string why = gpu::unavailable_reason();
  INFO(why);
  CHECK(contains(why, "cannot load the CUDA backend (PRISM_CUDA_BACKEND="));
  CHECK(contains(why, expect));
  // Every way onto the GPU says the same.
  const std::string moved = error_of([] { (void)ones({2}).to(Device::cuda); });
  CHECK(contains(moved, "to: CUDA is not available: " + why));
  CHECK(contains(error_of([] { gpu::require("--device cuda"); }), why));
  CHECK(contains(error_of([] { (void)gpu::allocate(16); }), why));
  // A GPU-only variant is then unknown, and the error says why no CUDA variant is listed.
  const std::string unknown = error_of([] { set_variant("matmul", "tiled"); });
  CHECK(contains(unknown, "no kernel variant named 'tiled'"));
  CHECK(contains(unknown, "CUDA variants not included: " + why));
  // The CPU is unaffected.
  CHECK(sum(ones({3})).item<float>() == 3.0f);
  CHECK_FALSE(maps_cuda_libraries(mapped_files()));
  std::printf("CHILD_DONE broken\n");
}

const char* const kBrokenCase = "child: a backend that cannot be loaded gives the reason";

TEST_CASE("a missing backend file: the reason names the path and dlopen's error") {
  expect_child(
      "PRISM_CUDA_BACKEND=/nonexistent/libprism_cuda.so "
      "'PRISM_TEST_LOADER_EXPECT=/nonexistent/libprism_cuda.so: cannot open shared object file'",
      kBrokenCase, "broken");
}

TEST_CASE("a file that is not a library: dlopen's error") {
  const std::filesystem::path junk =
      std::filesystem::temp_directory_path() / ("prism_junk_backend_" + std::to_string(getpid()));
  std::ofstream(junk) << "not an ELF file\n";
  expect_child("PRISM_CUDA_BACKEND=" + junk.string() + " PRISM_TEST_LOADER_EXPECT=" + junk.string(),
               kBrokenCase, "broken");
  std::filesystem::remove(junk);
}

TEST_CASE("a library without the backend's entry symbol") {
  expect_child("PRISM_CUDA_BACKEND=" + kernels_library() +
                   " 'PRISM_TEST_LOADER_EXPECT=not a prism CUDA backend'",
               kBrokenCase, "broken");
}

TEST_CASE("a backend built from other sources is refused, with the reason") {
  // tests/fixtures/stale_cuda_backend.cpp: the right entry symbol, another interface hash.
  expect_child(std::string("PRISM_CUDA_BACKEND=") + PRISM_TEST_STALE_BACKEND +
                   " 'PRISM_TEST_LOADER_EXPECT=built from different prism sources'",
               kBrokenCase, "broken");
}

#else

TEST_CASE("without CUDA nothing is loaded, whatever PRISM_CUDA_BACKEND says") {
  CHECK_FALSE(gpu::built());
  CHECK_FALSE(gpu::load_backend());
  CHECK_FALSE(gpu::backend_loaded());
  CHECK(contains(gpu::unavailable_reason(), "built without CUDA"));
}

#endif

}  // namespace
}  // namespace prism::kernels
