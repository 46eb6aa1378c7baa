// kernels/cpu/simd_runs.h: copy and zero runs of every length from 0 to a few registers,
// at every offset within a register, touch exactly their n elements: the guard elements around
// each run keep their values (a masked lane that stored, or a loop one too long, changes them).
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "kernels/cpu/simd_runs.h"

namespace prism::kernels::cpu {
namespace {

constexpr int kGuard = 40;  // elements on each side of a run: more than a register of doubles

template <class T>
void check_runs() {
  constexpr int L = simd::Vec<T>::lanes;
  for (int64_t n = 0; n <= 3 * L + 1; ++n) {
    for (int64_t offset = 0; offset < L; ++offset) {  // runs that start anywhere in a register
      CAPTURE(n);
      CAPTURE(offset);
      const int64_t size = 2 * kGuard + n;
      std::vector<T> src(static_cast<size_t>(size)), dst(static_cast<size_t>(size));
      for (int64_t i = 0; i < size; ++i) {
        src[static_cast<size_t>(i)] = static_cast<T>(i + 1);
        dst[static_cast<size_t>(i)] = static_cast<T>(-1000 - i);
      }
      const int64_t at = kGuard - offset;
      auto guards_kept = [&](const std::vector<T>& d) {
        for (int64_t i = 0; i < size; ++i) {
          if (i >= at && i < at + n) continue;
          if (d[static_cast<size_t>(i)] != static_cast<T>(-1000 - i)) return false;
        }
        return true;
      };

      std::vector<T> copied = dst;
      copy_run(src.data() + at, n, copied.data() + at);
      CHECK(guards_kept(copied));
      for (int64_t i = at; i < at + n; ++i) CHECK(copied[i] == src[i]);

      std::vector<T> zeroed = dst;
      zero_run(zeroed.data() + at, n);
      CHECK(guards_kept(zeroed));
      for (int64_t i = at; i < at + n; ++i) CHECK(zeroed[i] == T(0));
    }
  }
}

TEST_CASE("simd runs: copy and zero touch exactly n elements, for every n and offset") {
  check_runs<float>();
  check_runs<double>();
}

}  // namespace
}  // namespace prism::kernels::cpu
