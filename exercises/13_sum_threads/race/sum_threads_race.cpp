// Exercise 13, a typical mistake: a data race on the sum. The row's loop is shared between the
// threads, but every thread adds into the one variable `s`.
//
// `s += x` is a read, an add and a write. Two threads that read the same old s each write their
// own new value, and one of the two updates is lost. (The compiler may even keep s in a
// register for the whole loop, being allowed to assume no other thread writes it: then each
// thread adds its half to the value it read at the start, and the last one to store wins.) The
// sum of a long row then comes out short by about the other thread's share.
// The fix: a partial sum per chunk (or per thread), added after the parallel loop; or
// reduction(+:s), which is race-free but gives other bits at each thread count (the next
// wrong file).
// The checker catches it when the threads overlap: some case comes out wrong (which one depends on
// the timing), and the same-bits check sees two runs differ. It is in race/, not wrong/, because
// whether a race shows at all depends on the machine: on a loaded machine the second thread may
// start only after the first has finished, and then every sum comes out right. So ctest does not
// run it (a test that passes or fails by luck is no test); build and run it yourself:
//   cmake --build build --target exercise_sum_threads_race
//   build/exercises/exercise_sum_threads_race
#include "kernels/ops/reduce/args.h"
#include "kernels/registry.h"

using prism::kernels::ReduceArgs;

void my_sum_threads(const ReduceArgs<float>& a) {
  for (int64_t o = 0; o < a.rows; ++o) {
    const float* row = a.x + o * a.row_stride;
    double s = 0;
#pragma omp parallel for
    for (int64_t i = 0; i < a.cols; ++i) s += static_cast<double>(row[i * a.col_stride]);  // race
    a.out[o] = static_cast<float>(s);
  }
}

PRISM_REGISTER_KERNEL(sum, my_sum_threads);
