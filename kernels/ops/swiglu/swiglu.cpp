// swiglu over a 2-D view [rows, cols], forward and backward, each with a naive and a fused
// variant (the math is in kernels/args.h beside SwiGluArgs).
//
// SwiGLU is LLaMA's feed-forward gate: out = silu(gate) up, silu(z) = z sigmoid(z) =
// z / (1 + e^-z). Every element is on its own (no sums), so the variants differ only in how
// often they cross memory and how often they compute the exp: at the sizes of a real model
// ([4096 tokens, 11008] is 180 MB a tensor in float32) no operand fits in any cache.
//
// "naive" (tag naive): what a framework without fusion runs for silu(gate) * up, two elementwise
// ops with the output buffer holding the intermediate: out = silu(gate), then out = out * up.
// Two passes over memory: gate read, out written, then out and up read and out written again:
// 5 tensor-sized streams where 3 suffice.
//
// "fused" (tag fused): out = silu(gate) up per element, one pass: gate and up read, out written.
// Both variants evaluate the same expressions in the same order (math::Silu of
// kernels/ops/elementwise/math.h, then the product with up), so they agree to the bit (the lab's
// worst error is 0) unless the compiler contracts a multiply-add differently in one loop.
//
// Backward, with d = 1 + e^-gate and s = 1 / d: dgate = g up s (1 + gate (1 - s)),
// dup = g gate / d.
// "naive": the composition's backward, silu recomputed since the op saves only gate and up:
// dup = silu(gate), dup = g * dup (mul's gradient of up), dgate = g * up (mul's gradient of the
// silu output), dgate = silu_backward(gate, dgate): four passes, 10 streams, two exps an element.
// "fused": one pass computing d (one exp) per element and writing both gradients: gate, up and g
// read, dgate and dup written, 5 streams.
//
// What bounds them on one CPU thread is the exp, not memory: glibc's expf is a scalar call
// (the loops do not vectorise without -ffast-math) and costs more an element than moving the
// element's 12-20 bytes at this machine's memory bandwidth. So fusing the forward's two passes
// gains little, and the fused backward's gain comes mostly from one exp instead of two
// (measured: docs/PERFORMANCE.md, "RMSNorm and SwiGLU (CPU) (2026-11-25)"). A vectorised exp
// would move both to the memory bound, where fusion's 5-to-3 and 10-to-5 streams are the whole
// difference. silu is written without Sigmoid's sign branch, which the random signs of
// pre-activations mispredict half the time: with it, both forward variants were much slower
// (same section).
//
// Threads (kernels/cpu/parallel.h): the fused variants cut the rows * cols output elements into
// chunks of kChunkTranscendental (2048) elements over the threads, a chunk free to start and end
// mid-row (row_pieces), so one long row splits as well as many short ones. The chunk is the
// transcendental class's, measured on gelu with its vectorised tanh (docs/PERFORMANCE.md,
// "Threads (2026-11-25)"); swiglu's scalar exp costs more an element than that tanh, so a chunk
// here is more work, several times a parallel region's cost, and the grain errs on the safe
// side. Every element is computed by the same expressions whatever chunk it falls in and nothing
// is summed, so the bits are the same at any thread count. The naive variants stay on one
// thread: they are the readable baseline.
//
// Cost (docs/COSTS.md): forward 5 FLOPs per element (silu 4, times up 1), backward 11 (sigmoid
// 3, dgate 6, dup 2). Measured figures (prism lab swiglu / swiglu_backward --threads 1):
// docs/PERFORMANCE.md, "RMSNorm and SwiGLU (CPU)".
#include <algorithm>

#include "kernels/cpu/kernel_list.h"
#include "kernels/cpu/parallel.h"
#include "kernels/ops/elementwise/math.h"
#include "kernels/ops/swiglu/args.h"

namespace prism::kernels::cpu {
namespace {

// Element (r, j) of a strided 2-D view.
template <class T>
const T& at(const T* p, int64_t row_stride, int64_t col_stride, int64_t r, int64_t j) {
  return p[r * row_stride + j * col_stride];
}

template <class T>
void swiglu_naive(const SwiGluArgs<T>& a) {
  const math::Silu silu;
  const int64_t n = a.cols;
  for (int64_t r = 0; r < a.rows; ++r) {  // pass 1: out = silu(gate)
    for (int64_t j = 0; j < n; ++j) {
      a.out[r * n + j] = silu(at(a.gate, a.gate_rs, a.gate_cs, r, j));
    }
  }
  for (int64_t r = 0; r < a.rows; ++r) {  // pass 2: out = out * up
    for (int64_t j = 0; j < n; ++j) {
      a.out[r * n + j] = a.out[r * n + j] * at(a.up, a.up_rs, a.up_cs, r, j);
    }
  }
}

// Calls f(r, j0, j1) for each piece of a row that the flat elements [i0, i1) of a [rows, cols]
// view cover, in order: a chunk of elements may start and end mid-row, so a few long rows and
// many short ones split alike.
template <class F>
void row_pieces(int64_t i0, int64_t i1, int64_t cols, F&& f) {
  while (i0 < i1) {
    const int64_t r = i0 / cols, j0 = i0 % cols;
    const int64_t j1 = std::min(cols, j0 + (i1 - i0));
    f(r, j0, j1);
    i0 += j1 - j0;
  }
}

// Columns [j0, j1) of row r of the fused forward; kUnit: both inputs have column stride 1 (the
// common case, and the halves of a [rows, 2 hidden] projection), so the compiler sees plain
// unit-stride loads.
template <class T, bool kUnit>
void swiglu_fused_row(const SwiGluArgs<T>& a, int64_t r, int64_t j0, int64_t j1) {
  const math::Silu silu;
  const int64_t gs = kUnit ? 1 : a.gate_cs, us = kUnit ? 1 : a.up_cs;
  const T* gate = a.gate + r * a.gate_rs;
  const T* up = a.up + r * a.up_rs;
  T* out = a.out + r * a.cols;
  for (int64_t j = j0; j < j1; ++j) out[j] = silu(gate[j * gs]) * up[j * us];
}

template <class T>
void swiglu_fused(const SwiGluArgs<T>& a) {
  const bool unit = a.gate_cs == 1 && a.up_cs == 1;
  parallel_for(a.rows * a.cols, kChunkTranscendental, [&](int64_t i0, int64_t i1) {
    row_pieces(i0, i1, a.cols, [&](int64_t r, int64_t j0, int64_t j1) {
      if (unit) {
        swiglu_fused_row<T, true>(a, r, j0, j1);
      } else {
        swiglu_fused_row<T, false>(a, r, j0, j1);
      }
    });
  });
}

template <class T>
void swiglu_backward_naive(const SwiGluBackwardArgs<T>& a) {
  const math::Silu silu;
  const math::SiluBackward silu_backward;
  const int64_t n = a.cols;
  auto gate = [&](int64_t r, int64_t j) { return at(a.gate, a.gate_rs, a.gate_cs, r, j); };
  auto up = [&](int64_t r, int64_t j) { return at(a.up, a.up_rs, a.up_cs, r, j); };
  if (a.dup) {
    for (int64_t r = 0; r < a.rows; ++r) {  // pass 1: dup = silu(gate), the forward recomputed
      for (int64_t j = 0; j < n; ++j) a.dup[r * n + j] = silu(gate(r, j));
    }
    for (int64_t i = 0; i < a.rows * n; ++i) a.dup[i] = a.g[i] * a.dup[i];  // pass 2: g silu
  }
  if (a.dgate) {
    for (int64_t r = 0; r < a.rows; ++r) {  // pass 3: dgate = g up, the gradient of silu's output
      for (int64_t j = 0; j < n; ++j) a.dgate[r * n + j] = a.g[r * n + j] * up(r, j);
    }
    for (int64_t r = 0; r < a.rows; ++r) {  // pass 4: dgate = silu'(gate) dgate
      for (int64_t j = 0; j < n; ++j) {
        a.dgate[r * n + j] = silu_backward(gate(r, j), a.dgate[r * n + j]);
      }
    }
  }
}

// Columns [j0, j1) of row r of the fused backward; kDgate, kDup: which gradients are written
// (decided once per call, not per element).
template <class T, bool kUnit, bool kDgate, bool kDup>
void swiglu_backward_row(const SwiGluBackwardArgs<T>& a, int64_t r, int64_t j0, int64_t j1) {
  const int64_t gs = kUnit ? 1 : a.gate_cs, us = kUnit ? 1 : a.up_cs;
  const T* gate = a.gate + r * a.gate_rs;
  const T* up = a.up + r * a.up_rs;
  const T* g = a.g + r * a.cols;
  T* dgate = kDgate ? a.dgate + r * a.cols : nullptr;
  T* dup = kDup ? a.dup + r * a.cols : nullptr;
  for (int64_t j = j0; j < j1; ++j) {
    const T z = gate[j * gs];
    const T d = math::silu_denominator(z);  // 1 + e^-z: one exp, for both gradients
    // The naive variant's expressions, in its order: dup = g silu(z) = g (z / d);
    // dgate = (g up) s (1 + z (1 - s)) with s = 1 / d.
    if (kDup) dup[j] = g[j] * (z / d);
    if (kDgate) {
      const T s = T(1) / d;
      dgate[j] = (g[j] * up[j * us]) * s * (T(1) + z * (T(1) - s));
    }
  }
}

template <class T, bool kDgate, bool kDup>
void swiglu_backward_rows(const SwiGluBackwardArgs<T>& a) {
  const bool unit = a.gate_cs == 1 && a.up_cs == 1;
  parallel_for(a.rows * a.cols, kChunkTranscendental, [&](int64_t i0, int64_t i1) {
    row_pieces(i0, i1, a.cols, [&](int64_t r, int64_t j0, int64_t j1) {
      if (unit) {
        swiglu_backward_row<T, true, kDgate, kDup>(a, r, j0, j1);
      } else {
        swiglu_backward_row<T, false, kDgate, kDup>(a, r, j0, j1);
      }
    });
  });
}

template <class T>
void swiglu_backward_fused(const SwiGluBackwardArgs<T>& a) {
  if (a.dgate && a.dup) {
    swiglu_backward_rows<T, true, true>(a);
  } else if (a.dgate) {
    swiglu_backward_rows<T, true, false>(a);
  } else if (a.dup) {
    swiglu_backward_rows<T, false, true>(a);
  }
}

}  // namespace

void register_swiglu(Registry& r) {
  r.op("swiglu", Device::cpu)
      .add<SwiGluArgs>("fused", VariantTag::fused, "silu(gate) * up per element: one pass",
                       &swiglu_fused<float>, &swiglu_fused<double>);
  r.op("swiglu", Device::cpu)
      .add<SwiGluArgs>("naive", VariantTag::naive,
                       "out = silu(gate), then out *= up: two passes over memory",
                       &swiglu_naive<float>, &swiglu_naive<double>);
  r.op("swiglu_backward", Device::cpu)
      .add<SwiGluBackwardArgs>("fused", VariantTag::fused,
                               "one exp per element, dgate and dup in one pass",
                               &swiglu_backward_fused<float>, &swiglu_backward_fused<double>);
  r.op("swiglu_backward", Device::cpu)
      .add<SwiGluBackwardArgs>("naive", VariantTag::naive,
                               "the composition's backward: silu, g*silu, g*up, silu': four passes",
                               &swiglu_backward_naive<float>, &swiglu_backward_naive<double>);
}
PRISM_CPU_KERNELS(160, register_swiglu);

}  // namespace prism::kernels::cpu
