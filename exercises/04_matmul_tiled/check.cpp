// Exercise 04's checks: matmul in register tiles (the cases are shared with exercise 03).
#include "exercises/checker/checker.h"
#include "exercises/checker/shared_cases.h"
#include "tensor/ops.h"
#include "kernels/ops/matmul/args.h"

namespace prism::exercises {
namespace {

using kernels::MatmulArgs;

// The hints for the second and third performance tiers (the first is shared with exercise 03).
const char* const kTile2 =
    "keep a tile of C (e.g. 8 x 32) in registers across the whole k loop: each loaded value of "
    "B then feeds 8 FMAs, and C is loaded and stored once per tile instead of once per k.";
// For a tier missed only where B is transposed.
const char* const kPackB =
    "your tile holds where B is row-major and loses where it is transposed (b_cs != 1): its loads "
    "of B then stride by a whole row. Copy each panel of B into a contiguous buffer in the order "
    "the tile reads it before the k loop: the transpose then costs one copy per panel instead of "
    "a strided load per FMA.";
const char* const kTile3 =
    "pack the panels of A and B into contiguous buffers in the order the tile reads them (that "
    "also makes a transposed B cost nothing), and block k so a panel of B stays in L2 "
    "(kernels/ops/matmul/optimized.cpp).";

Exercise make_exercise() {
  return {
      "04_matmul_tiled",
      "exercises/04_matmul_tiled/matmul_tiled.cpp",
      "matmul",
      "matmul in tiles: a tile of C in registers, a panel of B in cache (MatmulArgs)",
      1e-4,
      kMatmulToleranceWhy,
      &Guard<MatmulArgs>::arm,
      [](const Case& c) { return matmul(c.inputs[0], c.inputs[1]); },
      matmul_cases,
      {"128"},
      {"128", "512", "512:nt"},  // in L2; past L2 (3 MB); B transposed
      {{"beats naive", "naive", 1.0, kLoop1, {{{"512:nt", "128:nt"}, kTransposedB}}},
       {"beats cache blocking alone", "blocked", 1.0, kTile2, {{{"512:nt", "128:nt"}, kPackB}}},
       {"within 2x of the best built-in", "best", 2.0, kTile3, {{{"512:nt", "128:nt"}, kPackB}}}},
      {},
      {},
  };
}

const bool registered = add_exercise(make_exercise());

}  // namespace
}  // namespace prism::exercises
