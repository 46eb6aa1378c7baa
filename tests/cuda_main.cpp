// The runner of the CUDA suite (tests/cuda/). Without a usable GPU it runs nothing and exits 77,
// which ctest reports as "skipped" with the reason printed here; listing the test cases (what
// ctest does at build time to discover them) never needs a GPU. After the tests it checks that
// no GPU memory is left in use.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string_view>

#include "kernels/gpu_runtime.h"

int main(int argc, char** argv) {
  // Only doctest's own query flags count: a test-case filter may contain any word.
  bool listing = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    for (const char* query :
         {"--list-", "-ltc", "-lts", "-lr", "--help", "-h", "-?", "--version"}) {
      const std::string_view q = query;
      listing = listing || arg == q || (q.back() == '-' && arg.substr(0, q.size()) == q);
    }
    listing = listing || arg.substr(0, 10) == "--dt-list-";
  }
  if (!listing && !prism::kernels::gpu::available()) {
    std::printf("skipped: the CUDA tests need a GPU: %s\n",
                prism::kernels::gpu::unavailable_reason().c_str());
    return 77;
  }
  doctest::Context context(argc, argv);
  const int failed = context.run();
  if (listing || context.shouldExit()) return failed;
  // Every tensor of the suite is gone by now, so once the caching allocator hands its free
  // buffers back, nothing may remain reserved: what does is a leak. Handing them back also
  // keeps compute-sanitizer's leak check (--leak-check full) for real leaks only.
  prism::kernels::gpu::empty_cache();
  const prism::kernels::gpu::CacheStats left = prism::kernels::gpu::cache_stats();
  if (left.reserved_bytes != 0) {
    std::printf("leak: %lld bytes of GPU memory still in use after the whole suite\n",
                static_cast<long long>(left.reserved_bytes));
    return failed == 0 ? 1 : failed;
  }
  return failed;
}
