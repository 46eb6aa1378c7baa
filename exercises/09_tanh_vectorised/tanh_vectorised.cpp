// Exercise 09: tanh, vectorised. The task is in README.md, next to this file.
//
// Your kernel receives a UnaryArgs<float> (kernels/args.h), as in exercise 01:
//   a.x       pointer to the input's first element
//   a.layout  the input's shape and strides, in elements: a.layout.ndim dims (1 to 8), sizes
//             a.layout.shape[d], strides a.layout.stride[d]; a contiguous input arrives as
//             ndim 1, stride 1
//   a.out     the output: contiguous, a.numel elements, in row-major order
//   a.numel   the number of elements
// Element i of the output is tanh of element i of x in row-major order over layout.shape.
//
// The math (README.md has the derivations):
//   tanh x = (e^x - e^-x) / (e^x + e^-x) = 1 - 2 / (e^(2x) + 1),   tanh(-x) = -tanh(x)
//   near 0:  tanh x = x - x^3/3 + 2 x^5/15 - 17 x^7/315 + ...   (converges for |x| < pi/2)
//   large:   tanh x rounds to +-1 in float32 once |x| > 9.01
// The `naive` variant calls std::tanh (libm's tanhf) once per element: 12 to 15 ns each, and a
// loop around a call cannot be vectorised. Your tanh is plain arithmetic (a polynomial near 0,
// the exp form elsewhere, with an exp the compiler can inline and vectorise: write one with a
// range reduction and a polynomial, or include prism's, "kernels/cpu/fast_exp.h",
// prism::kernels::cpu::fast_exp), so that the loop over the output runs 8 or 16 at a time.
//
// The checker compares with std::tanh on many layouts, then sweeps the whole float range for
// the error in ulps against tanh in double (bound: 4 ulps), then tries +-0, +-inf, NaN,
// denormals and +-FLT_MAX, and times your kernel against naive.
//
// Check it:  build/prism check tanh_vectorised
#include "kernels/ops/elementwise/args.h"
#include "kernels/registry.h"

using prism::kernels::UnaryArgs;

// [[maybe_unused]]: the empty body does not read `a` yet, and -Wextra warns about unused
// parameters. Delete the attribute once your code uses `a`.
void my_tanh_vectorised([[maybe_unused]] const UnaryArgs<float>& a) {
  // TODO(exercise): set a.out[i] = tanh(x_i) for every i in [0, a.numel), x_i element i of x in
  // row-major order. Start with a scalar function float tanh_approx(float x) made of arithmetic
  // only and the contiguous case (ndim 1, stride 1), run the checker, then handle any layout
  // and make the loop vectorise. Delete this TODO line when the checker passes: ctest then
  // checks your kernel instead of expecting this empty one to fail.
}

PRISM_REGISTER_KERNEL(tanh, my_tanh_vectorised);
