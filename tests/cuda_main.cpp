// The runner of the CUDA suite (tests/cuda/). Without a usable GPU it runs nothing and exits 77,
// which ctest reports as "skipped" with the reason printed here; listing the test cases (what
// ctest does at build time to discover them) never needs a GPU.
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
  return context.run();
}
