// Matmul, optimized variant: packed panels, a register-blocked SIMD microkernel, the BLIS loop
// nest, and OpenMP threads over blocks of C.
//
// Idea (Goto & van de Geijn 2008, "Anatomy of high-performance matrix multiplication"; the BLIS
// papers). The microkernel (microkernel.h) keeps a 14 x 32 float tile of C in 28 zmm
// registers and runs at the FMA units' rate provided its two operands arrive from the caches with
// unit stride. Everything else arranges that:
//
//   for jc < n step NC                      B panel  kc x nc   packed once per (jc, pc), in L3
//     for pc < k step KC
//       pack B[pc:pc+kc, jc:jc+nc]
//       for ic < m step MC                  A block  mc x kc   packed once per (jc, pc, ic), L2
//         pack A[ic:ic+mc, pc:pc+kc]
//         for jr < nc step NR               B sliver kc x NR   reused by every A sliver
//           for ir < mc step MR             A sliver MR x kc   streamed from L2
//             C[ir:ir+MR, jr:jr+NR] (+)= A sliver @ B sliver    (microkernel, kc steps)
//
// Block sizes (kBlocking) from this machine's caches (Zen 4: 32 KiB L1d, 1 MiB L2 per core,
// 32 MiB L3 shared) and from measurement (docs/PERFORMANCE.md, "Matmul ladder", "What tuning
// found"):
//   KC = 512: the textbook choice keeps the B sliver (kc x NR) in L1, kc = 128-192 for 32 floats
//       a row. On 2048^3, 1 thread, each doubling of kc from 128 to 512 ran faster, and 1024 no
//       faster than 512. What larger kc buys is fewer passes over C: each microkernel call loads
//       and stores its 14 x 32 tile of C once per kc steps (from L3 or memory when C is large).
//       The operands need only 184 bytes per step of 28 cycles, which L2 delivers easily, so the
//       64 KiB B sliver does not have to sit in L1 on this core. k is cut into equal blocks
//       (784 = 392 + 392).
//   MC = 252: the packed A block (mc x kc floats = 504 KiB) fills half of L2, next to the B
//       sliver being used and the lines of C passing through (any mc from 112 to 1008 ran as
//       fast, within the noise).
//   NC = 4096: the packed B panel (kc x nc = 8 MiB) takes a quarter of L3, so both threads'
//       panels and a band of C fit.
// float64 uses the same byte budgets (its tile is 14 x 16): kc = 512, mc = 126, nc = 2048.
// Packing (pack.h) reads A and B through their strides, so a transposed operand costs
// only the packing.
//
// Shapes the scheme fits badly are rearranged first (matmul_optimized below):
//   a batch of A's over one shared B (batch stride 0)   one taller product, [batch m, k] @ B;
//   one column, C = A @ b                               computed as one row, c^T = b^T @ A^T;
//   one row, c = a @ B (a matrix-vector product)        no packing: kernels/ops/matmul/gemv.h;
//   a narrow C (m x 10)                                 computed as C^T = B^T @ A^T (10 x m), when
//                                                       that leaves clearly fewer tile lanes idle;
//   few rows of C (m <= 224) and a row-major B          B read in place, not packed, when a block
//                                                       of it fits in 1 MiB (kDirectBRows below).
//   a few hundred outputs over a long k, both          dot products, nothing packed (dot_form
//   operands along k (A @ B^T)                          below).
//   few rows of C, a row-major B, 256 <= k <= KC        two halves of k, one per thread, added
//   (dx = g @ W in a training step)                     after (split_k_form below).
//
// Threads: C is cut into a tm x tn grid of blocks, one per thread, along whole tiles (rows of all
// batches together, so a batched product splits evenly too). Each thread runs the loop nest on
// its block with its own packing buffers (thread-local, grown on demand, never freed), so the
// threads share nothing and never wait for each other until the region ends. The price is that
// each thread packs the operand it shares with its neighbours itself: k * (rows + cols) copies
// per thread against 2 * rows * cols * k FLOPs, a few percent for the smallest blocks we split.
// Products under kParallelGemmMacs (parallel.h) run on the calling thread: on this 2-core shared
// machine a fork/join costs more than it saves for them, and a descheduled second thread stalls the
// join (kernels/cpu/eigen_threads.h has the measurements).
//
// Cost: 2 m n k FLOPs per batch; packing m k (n / NC) + k n (m-blocks per thread) copies.
// At 1 thread it is the fastest variant measured, ahead of Eigen on the squares, on the
// transposed forms and on every product of an MLP step, and near the FMA peak of `prism machine`
// (measured: docs/PERFORMANCE.md, "Matmul ladder", "1 thread"). At 2 threads it nearly doubles
// when both cores are free, but this shared machine rarely has a free core, and OpenMP's
// spinning at the join then costs a scheduler slice (milliseconds) per call: see "2 threads" in
// that section.
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <memory>
#include <new>

#include "kernels/cpu/kernel_list.h"
#include "kernels/cpu/parallel.h"
#include "kernels/ops/elementwise/math.h"
#include "kernels/ops/matmul/engine.h"
#include "kernels/ops/matmul/gemv.h"
#include "kernels/ops/matmul/microkernel.h"
#include "kernels/ops/matmul/pack.h"
#include "kernels/ops/linear/args.h"
#include "kernels/ops/matmul/args.h"

namespace prism::kernels::cpu {
namespace {

struct Blocking {
  int64_t kc, mc, nc;
};

// The byte budgets above, in elements of T: a 64 KiB B sliver, a 512 KiB A block, an 8 MiB B
// panel.
template <class T>
constexpr Blocking kBlocking = [] {
  constexpr int64_t MR = MicroTile<T>::mr, NR = MicroTile<T>::nr;
  const int64_t kc = (int64_t{64} << 10) / (NR * int64_t{sizeof(T)});
  const int64_t mc = (int64_t{512} << 10) / (kc * int64_t{sizeof(T)}) / MR * MR;
  const int64_t nc = (int64_t{8} << 20) / (kc * int64_t{sizeof(T)}) / NR * NR;
  return Blocking{kc, mc, nc};
}();

// Direct B: a product with at most kDirectBRows rows reads a row-major B in place instead of
// packing it, when one kc x nc block of B fits in kDirectBBytes (L2 keeps it: its rows are then
// found again by each of the few row tiles). With so few rows, packing B cost about as much as
// using it: reading it in place made conv2d's per-image product (32 x 144 x 121), the MLP's
// first layer (64 x 784 x 256) and the other shapes tried up to 224 rows faster, but 140 x 1024
// x 1024, whose 2 MiB block of B does not stay near, slower: packed there (measured:
// docs/PERFORMANCE.md, "Conv at one thread (2026-11-25)").
template <class T>
constexpr int64_t kDirectBRows = 16 * MicroTile<T>::mr;
constexpr int64_t kDirectBBytes = int64_t{1} << 20;

// A growable 64-byte aligned scratch array, one per thread and element type.
template <class T>
class PackBuffer {
 public:
  T* get(int64_t count) {
    if (count > capacity_) {
      const size_t bytes = (static_cast<size_t>(count) * sizeof(T) + 63) / 64 * 64;
      T* grown = static_cast<T*>(std::aligned_alloc(64, bytes));
      if (!grown) throw std::bad_alloc();  // the old buffer and capacity stay valid
      data_.reset(grown);
      capacity_ = count;
    }
    return data_.get();
  }

 private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T, Free> data_;
  int64_t capacity_ = 0;
};

template <class T>
struct ThreadBuffers {
  PackBuffer<T> a, b;
  PackBuffer<T> c1;  // the second half's C of a split-k product (run_split_k)
};

template <class T>
ThreadBuffers<T>& thread_buffers() {
  thread_local ThreadBuffers<T> buffers;
  return buffers;
}

int64_t round_up(int64_t x, int64_t to) {
  return (x + to - 1) / to * to;
}

// One product of the kernel's batch, in the general form the loop nest runs on: every operand,
// C included, has its own batch, row and column strides (C's differ from [batch, m, n] when the
// product is computed transposed, see `transposed`).
// The linear op (engine.h) adds a prologue and an epilogue, for a single product (batch
// 1): an operand read as max(0, .) (applied as it is packed, kernels/ops/matmul/pack.h), and, once
// a block of C is complete, on the thread that computed it,
//   C[i, j] += bias[i bias_rs + j bias_cs],   then   C[i, j] = relu'(mask[i, j]) C[i, j].
template <class T>
struct Problem {
  const T* a;
  const T* b;
  T* c;
  int64_t batch, m, n, k;
  int64_t a_bs, a_rs, a_cs;
  int64_t b_bs, b_rs, b_cs;
  int64_t c_bs, c_rs, c_cs;
  bool relu_a = false, relu_b = false;
  const T* bias = nullptr;
  int64_t bias_rs = 0, bias_cs = 0;
  const T* mask = nullptr;
  int64_t mask_rs = 0, mask_cs = 0;
  T* row_sums = nullptr;  // when set: row_sums[i] = sum over k of relu_a(A)[i, :], for C's rows
};

// C^T = B^T @ A^T: the same product with the roles of A and B exchanged, through strides only.
template <class T>
Problem<T> transposed(const Problem<T>& p) {
  Problem<T> t = p;
  std::swap(t.a, t.b);
  std::swap(t.m, t.n);
  t.a_bs = p.b_bs, t.a_rs = p.b_cs, t.a_cs = p.b_rs;
  t.b_bs = p.a_bs, t.b_rs = p.a_cs, t.b_cs = p.a_rs;
  std::swap(t.c_rs, t.c_cs);
  std::swap(t.relu_a, t.relu_b);
  std::swap(t.bias_rs, t.bias_cs);
  std::swap(t.mask_rs, t.mask_cs);
  return t;
}

// The part of p that starts at row r0 and column c0 of its C (pointers moved, sizes unchanged).
template <class T>
Problem<T> offset_by(const Problem<T>& p, int64_t r0, int64_t c0) {
  Problem<T> q = p;
  q.a = p.a + r0 * p.a_rs;
  q.b = p.b + c0 * p.b_cs;
  q.c = p.c + r0 * p.c_rs + c0 * p.c_cs;
  if (p.bias) q.bias = p.bias + r0 * p.bias_rs + c0 * p.bias_cs;
  if (p.mask) q.mask = p.mask + r0 * p.mask_rs + c0 * p.mask_cs;
  if (p.row_sums) q.row_sums = p.row_sums + r0;
  return q;
}

// Row sums of A (the linear op's bias gradient: dW = g^T relu(x) has A = g^T, whose row sums
// are g's column sums). Each row is added in order of k, one element after the other, whichever
// path computes it: here, reading A in place (the paths that do not pack it, split-k, a
// transposed product), or gemm_block from the packed copy. So the bits do not depend on the
// path or on the threads.
template <class T>
void row_sums_direct(const Problem<T>& p, int64_t r0, int64_t r1) {
  const math::Relu relu;
  for (int64_t i = r0; i < r1; ++i) {
    const T* a = p.a + i * p.a_rs;
    T s = 0;
    for (int64_t q = 0; q < p.k; ++q) s += p.relu_a ? relu(a[q * p.a_cs]) : a[q * p.a_cs];
    p.row_sums[i] = s;
  }
}

// The same sums from a packed block of A (pack.h's layout: sliver s holds rows s MR ..
// s MR + MR - 1, element (w, q) at s kc MR + q MR + w), continuing the sums of earlier blocks of k.
template <int MR, class T>
void add_packed_row_sums(const T* apack, int64_t rows, int64_t kc, T* sums) {
  for (int64_t s0 = 0; s0 < rows; s0 += MR, apack += kc * MR) {
    const int64_t lines = std::min<int64_t>(MR, rows - s0);
    T acc[MR];
    for (int64_t w = 0; w < lines; ++w) acc[w] = sums[s0 + w];
    for (int64_t q = 0; q < kc; ++q) {
      for (int64_t w = 0; w < lines; ++w) acc[w] += apack[q * MR + w];
    }
    for (int64_t w = 0; w < lines; ++w) sums[s0 + w] = acc[w];
  }
}

// The paths that read an operand in place (gemv_block, dot_block) get a ReLU'd copy of it
// instead, in the calling thread's packing buffer, laid out along the same unit stride, so they
// take the same path, in the same order, as they would on the ReLU'd tensor.
template <class T>
const T* relu_copy_in_layout(const T* src, int64_t rows, int64_t cols, int64_t& rs, int64_t& cs,
                             T* dst) {
  const math::Relu relu;
  const bool by_column = rs == 1 && cs != 1;  // keep a unit row stride where it was
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      dst[by_column ? j * rows + i : i * cols + j] = relu(src[i * rs + j * cs]);
    }
  }
  rs = by_column ? 1 : cols;
  cs = by_column ? rows : 1;
  return dst;
}

template <class T>
Problem<T> without_prologue(Problem<T> p) {
  ThreadBuffers<T>& buf = thread_buffers<T>();
  if (p.relu_a) p.a = relu_copy_in_layout(p.a, p.m, p.k, p.a_rs, p.a_cs, buf.a.get(p.m * p.k));
  if (p.relu_b) p.b = relu_copy_in_layout(p.b, p.k, p.n, p.b_rs, p.b_cs, buf.b.get(p.k * p.n));
  p.relu_a = p.relu_b = false;
  return p;
}

// The epilogue on rows [r0, r1) of p's C, every column: the bias, then the mask.
template <class T>
void apply_epilogue(const Problem<T>& p, int64_t r0, int64_t r1) {
  if (!p.bias && !p.mask) return;
  const math::ReluBackward relu_grad;
  for (int64_t i = r0; i < r1; ++i) {
    T* c = p.c + i * p.c_rs;
    if (p.bias) {
      const T* b = p.bias + i * p.bias_rs;
      if (p.c_cs == 1 && p.bias_cs == 1) {
#pragma omp simd
        for (int64_t j = 0; j < p.n; ++j) c[j] += b[j];
      } else {
        for (int64_t j = 0; j < p.n; ++j) c[j * p.c_cs] += b[j * p.bias_cs];
      }
    }
    if (p.mask) {
      const T* x = p.mask + i * p.mask_rs;
      if (p.c_cs == 1 && p.mask_cs == 1) {
#pragma omp simd
        for (int64_t j = 0; j < p.n; ++j) c[j] = relu_grad(x[j], c[j]);
      } else {
        for (int64_t j = 0; j < p.n; ++j)
          c[j * p.c_cs] = relu_grad(x[j * p.mask_cs], c[j * p.c_cs]);
      }
    }
  }
}

// One thread's share of one product: C[0:m, 0:n] = A[0:m, 0:k] @ B[0:k, 0:n], or C += that
// product (accumulate_into_c); pointers and sizes of p describe the block, batch and batch
// strides are not used.
template <class T>
void gemm_block(const Problem<T>& p, bool accumulate_into_c = false) {
  constexpr int MR = MicroTile<T>::mr, NR = MicroTile<T>::nr;
  Blocking blk = kBlocking<T>;
  // k in equal blocks (784 = 392 + 392 rather than 512 + 272): the same number of passes over C,
  // each as long as the others.
  const int64_t k_blocks = (p.k + blk.kc - 1) / blk.kc;
  blk.kc = (p.k + k_blocks - 1) / k_blocks;
  ThreadBuffers<T>& buf = thread_buffers<T>();
  T* bpack = buf.b.get(round_up(std::min(p.n, blk.nc), NR) * std::min(p.k, blk.kc));
  T* apack = buf.a.get(round_up(std::min(p.m, blk.mc), MR) * std::min(p.k, blk.kc));

  // Direct B: with few rows of C, each packed B element would serve only m / MR microkernel
  // calls, and packing it costs about as much as they do; a row-major B is then read in place.
  const bool direct_b =
      p.b_cs == 1 && !p.relu_b && p.m <= kDirectBRows<T> &&
      std::min(p.k, blk.kc) * std::min(p.n, blk.nc) * int64_t{sizeof(T)} <= kDirectBBytes;
  for (int64_t jc = 0; jc < p.n; jc += blk.nc) {
    const int64_t nc = std::min(blk.nc, p.n - jc);
    for (int64_t pc = 0; pc < p.k; pc += blk.kc) {
      const int64_t kc = std::min(blk.kc, p.k - pc);
      const bool accumulate = pc > 0 || accumulate_into_c;
      const T* b_block = p.b + pc * p.b_rs + jc * p.b_cs;
      // Read in place: the whole slivers; packed: everything, or (direct) the last, partial
      // sliver, which needs the zero padding.
      const int64_t in_place = direct_b ? nc / NR * NR : 0;
      if (in_place < nc) {
        const T* src = b_block + in_place * p.b_cs;
        if (p.relu_b) {
          pack_slivers<NR, true>(src, p.b_cs, p.b_rs, nc - in_place, kc, bpack);
        } else {
          pack_slivers<NR, false>(src, p.b_cs, p.b_rs, nc - in_place, kc, bpack);
        }
      }
      for (int64_t ic = 0; ic < p.m; ic += blk.mc) {
        const int64_t mc = std::min(blk.mc, p.m - ic);
        const T* src = p.a + ic * p.a_rs + pc * p.a_cs;
        if (p.relu_a) {
          pack_slivers<MR, true>(src, p.a_rs, p.a_cs, mc, kc, apack);
        } else {
          pack_slivers<MR, false>(src, p.a_rs, p.a_cs, mc, kc, apack);
        }
        if (p.row_sums && jc == 0) {  // A is packed again for each panel of B: sum it once
          if (pc == 0) std::fill(p.row_sums + ic, p.row_sums + ic + mc, T(0));
          add_packed_row_sums<MR>(apack, mc, kc, p.row_sums + ic);
        }
        for (int64_t jr = 0; jr < nc; jr += NR) {
          const bool here = jr < in_place;
          const T* bs = here ? b_block + jr : bpack + (jr - in_place) * kc;
          const int64_t b_step = here ? p.b_rs : NR;
          for (int64_t ir = 0; ir < mc; ir += MR) {
            tile_update(kc, apack + ir * kc, bs, b_step,
                        p.c + (ic + ir) * p.c_rs + (jc + jr) * p.c_cs, p.c_rs, p.c_cs,
                        std::min<int64_t>(MR, mc - ir), std::min<int64_t>(NR, nc - jr), accumulate);
          }
        }
      }
    }
  }
}

// The dot-product form, for a small C whose operands both run along k: A row-major and B read
// through a transpose, C = A @ B^T with rows of A and columns of B contiguous, as conv2d's
// weight gradient dy_n [O, P] @ cols_n^T. Each element of C is then the dot product of two
// contiguous arrays: a vector of partial sums over k, added up at the end. A block of
// kDotRows x kDotCols elements shares its loads (a vector of A's row serves kDotCols products,
// one of B's column kDotRows). Nothing is packed: for such a C the tiled kernel packs both
// operands through transposes and then runs mostly empty tiles (dot_form has the figures).
constexpr int kDotRows = 4, kDotCols = 3;

template <class T>
void dot_block(const Problem<T>& p) {
  using S = simd::Vec<T>;
  using V = typename S::V;
  constexpr int L = S::lanes;
  for (int64_t i0 = 0; i0 < p.m; i0 += kDotRows) {
    for (int64_t j0 = 0; j0 < p.n; j0 += kDotCols) {
      const int64_t ri = std::min<int64_t>(kDotRows, p.m - i0);
      const int64_t rj = std::min<int64_t>(kDotCols, p.n - j0);
      // A block at the edge repeats its last row or column; those sums are not stored.
      const T* a[kDotRows];
      const T* b[kDotCols];
      for (int i = 0; i < kDotRows; ++i) a[i] = p.a + (i0 + std::min<int64_t>(i, ri - 1)) * p.a_rs;
      for (int j = 0; j < kDotCols; ++j) b[j] = p.b + (j0 + std::min<int64_t>(j, rj - 1)) * p.b_cs;
      V acc[kDotRows][kDotCols];
      for (auto& row : acc) {
        for (V& v : row) v = S::zero();
      }
      auto step = [&](const V(&bv)[kDotCols], const V(&av)[kDotRows]) {
        for (int i = 0; i < kDotRows; ++i) {
          for (int j = 0; j < kDotCols; ++j) acc[i][j] = S::fma(av[i], bv[j], acc[i][j]);
        }
      };
      int64_t k0 = 0;
      for (; k0 + L <= p.k; k0 += L) {
        V bv[kDotCols], av[kDotRows];
        for (int j = 0; j < kDotCols; ++j) bv[j] = S::load(b[j] + k0);
        for (int i = 0; i < kDotRows; ++i) av[i] = S::load(a[i] + k0);
        step(bv, av);
      }
      if (k0 < p.k) {  // the last partial vector: lanes past k load as 0
        const int tail = static_cast<int>(p.k - k0);
        V bv[kDotCols], av[kDotRows];
        for (int j = 0; j < kDotCols; ++j) bv[j] = S::load_first(b[j] + k0, tail);
        for (int i = 0; i < kDotRows; ++i) av[i] = S::load_first(a[i] + k0, tail);
        step(bv, av);
      }
      for (int64_t i = 0; i < ri; ++i) {
        for (int64_t j = 0; j < rj; ++j)
          p.c[(i0 + i) * p.c_rs + (j0 + j) * p.c_cs] = S::sum(acc[i][j]);
      }
    }
  }
}

// A one-row block, c = a @ B, without packing B (gemv.h).
template <class T>
void gemv_block(const Problem<T>& p) {
  const T* a = p.a;
  if (p.a_cs != 1) {
    T* contiguous = thread_buffers<T>().a.get(p.k);
    for (int64_t i = 0; i < p.k; ++i) contiguous[i] = p.a[i * p.a_cs];
    a = contiguous;
  }
  gemv_row(p.n, p.k, a, p.b, p.b_rs, p.b_cs, p.c);
}

// Whether a block runs in the dot-product form: both operands contiguous along k, at most
// kDotMaxOutputs elements of C and at least kDotMinK steps of k. Against the tiled kernel the
// dot form won on 16 x 676 x 9 (conv1's weight gradient per image) and the other shapes tried
// with at most 512 outputs and k >= 256, and lost on 16 x 128 x 16 (k too short to pay for the
// final sums) and 32 x 256 x 32 (1024 outputs: the tile's reuse wins) (measured:
// docs/PERFORMANCE.md, "Conv at one thread (2026-11-25)").
constexpr int64_t kDotMaxOutputs = 512;
constexpr int64_t kDotMinK = 256;

template <class T>
bool dot_form(const Problem<T>& p) {
  return p.a_cs == 1 && p.b_rs == 1 && p.m * p.n <= kDotMaxOutputs && p.k >= kDotMinK;
}

// Split-k: a product with few rows of C (m <= kDirectBRows), a row-major B read in place and a
// k of at least kSplitKMinK, all in one block of k, is computed as two halves of k,
//   C = A[:, :h] @ B[:h, :] + A[:, h:] @ B[h:, :],   h = k / 2,
// whatever the thread count. At one thread that is the loop nest with its k cut in two: the
// first half stores its tile, the second adds its own sum (from zero, in registers) to it. At two
// threads each half is one thread's, the second half goes into a scratch C, and the threads
// then add the scratch into C row band by row band: the same additions, C0 + C1, so the bits
// are the same at 1, 2 or more threads.
// Why: in a training step such a product is dx = g @ W (the MLP's 64 x 256 x 256), and W's
// rows are where the previous users left them: the optimizer updated W in row bands (the dW
// grid below cuts it so) and the forward x @ W^T gave each thread the rows of W behind its
// columns. Split over C's columns, each thread would read half of every row of W, half of them
// from the other core's cache, and then the optimizer would have to take those lines back;
// split over k, each thread reads only its own band of rows. It packs half of A instead of all
// of it, and pays one pass over an m x n scratch. In the MLP step at 2 threads both dx and the
// update after it got faster, as W's lines are no longer in both caches, and so did the whole
// step (measured: docs/PERFORMANCE.md, "Threads (2026-11-25)", "Split-k for dx"). One thread
// pays one more pass over C (64 x 256 floats) for the fixed cut.
constexpr int64_t kSplitKMinK = 256;

template <class T>
bool split_k_form(const Problem<T>& p) {
  constexpr int64_t kc = kBlocking<T>.kc;
  return p.batch == 1 && p.m > 1 && p.m <= kDirectBRows<T> && p.b_cs == 1 && p.c_cs == 1 &&
         p.k >= kSplitKMinK && p.k <= kc &&
         p.k * std::min(p.n, kBlocking<T>.nc) * int64_t{sizeof(T)} <= kDirectBBytes;
}

// The two halves of k of a split-k product: half 0 writes C, half 1 writes `c1` (row stride n),
// or adds into C when c1 is null.
template <class T>
Problem<T> k_half(const Problem<T>& p, int half, T* c1) {
  const int64_t h = p.k / 2;
  Problem<T> q = p;
  q.row_sums = nullptr;  // whole rows of A: run_split_k sums them after the halves
  if (half == 0) {
    q.k = h;
    return q;
  }
  q.a = p.a + h * p.a_cs;
  q.b = p.b + h * p.b_rs;
  q.k = p.k - h;
  if (c1) {
    q.c = c1;
    q.c_rs = p.n;
  }
  return q;
}

// How C is split among threads: a tm x tn grid over units of whole tiles; rows count the tiles of
// every batch in turn (unit u is rows [(u % tiles_m) * MR, ...) of batch u / tiles_m).
struct Grid {
  int tm = 1, tn = 1;
};

// The grid for `threads` threads that minimises one thread's work per step of k: its (padded)
// tile area in multiply-adds, plus its packing of rows + cols elements, each copy weighted as 8
// multiply-adds (packing moves about 2 elements per cycle, the microkernel does 16 multiply-adds
// per cycle), plus, when the columns are split, the same 8 per element of its block of C, once
// (so / k per step). That last term is for the op after the product: it splits C into row-major
// chunks (parallel.h), so with C's columns split half of every thread's block is read next from
// the other core's cache, while row bands hand each thread its own. It decides only near-ties
// with a short k, a weight gradient above all: the MLP's dW = g^T x (256 x 784, k = 64, read
// next by the optimizer) is now cut in row bands, which made the 2-thread MLP step a few
// percent faster and left the cnn and transformer steps as they were (measured:
// docs/PERFORMANCE.md, "Threads (2026-11-25)").
constexpr double kCopyMacs = 8;
Grid choose_grid(int threads, int64_t units_m, int64_t units_n, int64_t mr, int64_t nr, int64_t k) {
  Grid best;
  double best_cost = 0;
  for (int tm = 1; tm <= threads; ++tm) {
    for (int tn = 1; tm * tn <= threads; ++tn) {
      if (tm > units_m || tn > units_n) continue;
      const double rows = static_cast<double>((units_m + tm - 1) / tm * mr);
      const double cols = static_cast<double>((units_n + tn - 1) / tn * nr);
      double cost = rows * cols + kCopyMacs * (rows + cols);
      if (tn > 1) cost += kCopyMacs * rows * cols / static_cast<double>(k);
      if (best_cost == 0 || cost < best_cost) {
        best_cost = cost;
        best = {tm, tn};
      }
    }
  }
  return best;
}

// The multiply-adds the microkernels do for an m x n product: edge tiles are cut to an even
// number of rows and a whole number of vectors (microkernel.h).
template <class T>
int64_t padded_area(int64_t m, int64_t n) {
  return round_up(m, 2) * round_up(n, MicroTile<T>::lanes);
}

// A split-k product (split_k_form above) on `threads` threads: one per half of k, at most two.
template <class T>
void run_split_k(const Problem<T>& p, int threads) {
  if (threads < 2) {
    gemm_block(k_half(p, 0, static_cast<T*>(nullptr)));
    gemm_block(k_half(p, 1, static_cast<T*>(nullptr)), /*accumulate_into_c=*/true);
    apply_epilogue(p, 0, p.m);
    if (p.row_sums) row_sums_direct(p, 0, p.m);
    return;
  }
  // The second half's C: the calling thread's buffer, read by both threads after the barrier.
  T* c1 = thread_buffers<T>().c1.get(p.m * p.n);
  std::exception_ptr error;
#pragma omp parallel num_threads(2)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    if (t == 0) note_threads(nt);
    try {
      if (nt == 1) {  // the runtime gave one thread: both halves here, the same additions
        gemm_block(k_half(p, 0, c1));
        gemm_block(k_half(p, 1, c1));
      } else {
        gemm_block(k_half(p, t, c1));
      }
    } catch (...) {
#pragma omp critical(prism_matmul_optimized_error)
      if (!error) error = std::current_exception();
    }
#pragma omp barrier
    if (!error) {
      // Each thread finishes its band of rows: the second half added, then the epilogue while
      // the band is in its cache.
      const int64_t i0 = p.m * t / nt, i1 = p.m * (t + 1) / nt;
      for (int64_t i = i0; i < i1; ++i) {
        T* c = p.c + i * p.c_rs;
        const T* add = c1 + i * p.n;
        for (int64_t j = 0; j < p.n; ++j) c[j] += add[j];
      }
      apply_epilogue(p, i0, i1);
      if (p.row_sums) row_sums_direct(p, i0, i1);
    }
  }
  if (error) std::rethrow_exception(error);
}

template <class T>
void run(const Problem<T>& p) {
  constexpr int MR = MicroTile<T>::mr, NR = MicroTile<T>::nr;
  const int64_t tiles_m = (p.m + MR - 1) / MR;
  const int64_t units_m = p.batch * tiles_m, units_n = (p.n + NR - 1) / NR;
  const int64_t macs = p.batch * p.m * p.n * p.k;
  const bool one_row = p.m == 1 && p.c_cs == 1;  // the gemv path below
  // A one-row product is bound by reading B and pays for a region sooner (parallel.h).
  const int threads = one_row ? threads_for_macs(macs, kParallelGemvMacs, kGemvMacsPerThread)
                              : threads_for_macs(macs, kParallelGemmMacs, kGemmMacsPerThread);
  if (split_k_form(p)) {
    run_split_k(p, threads);
    return;
  }
  const Grid grid = choose_grid(threads, units_m, units_n, MR, NR, p.k);
  // The path is chosen for the whole product, not block by block, so that every element is
  // summed the same way at any thread count: a grid can leave a one-row block, or blocks small
  // enough for the dot form, where one thread would run the loop nest over all of C.
  const bool gemv_path = one_row;
  const bool dot_path = !gemv_path && dot_form(p);

  // Block t of the grid: row units [u0, u1) (possibly spanning batches), columns [c0, c1).
  auto run_block = [&](int t) {
    const int64_t ti = t / grid.tn, tj = t % grid.tn;
    const int64_t u0 = units_m * ti / grid.tm, u1 = units_m * (ti + 1) / grid.tm;
    const int64_t c0 = std::min(p.n, units_n * tj / grid.tn * NR);
    const int64_t c1 = std::min(p.n, units_n * (tj + 1) / grid.tn * NR);
    for (int64_t u = u0; u < u1;) {
      const int64_t b = u / tiles_m;
      const int64_t last = std::min(u1, (b + 1) * tiles_m);  // this batch's units end here
      const int64_t r0 = (u - b * tiles_m) * MR;
      const int64_t r1 = std::min(p.m, (last - b * tiles_m) * MR);
      Problem<T> block = offset_by(p, r0, c0);  // an epilogue's operands only with batch 1
      block.a += b * p.a_bs;
      block.b += b * p.b_bs;
      block.c += b * p.c_bs;
      block.m = r1 - r0;
      block.n = c1 - c0;
      if (tj > 0) block.row_sums = nullptr;  // the first column of blocks sums A's rows
      if (gemv_path) {
        const Problem<T> plain = without_prologue(block);
        gemv_block(plain);
        if (plain.row_sums) row_sums_direct(plain, 0, plain.m);
      } else if (dot_path) {
        const Problem<T> plain = without_prologue(block);
        dot_block(plain);
        if (plain.row_sums) row_sums_direct(plain, 0, plain.m);
      } else {
        gemm_block(block);
      }
      apply_epilogue(block, 0, block.m);  // on the thread that computed the block
      u = last;
    }
  };

  const int blocks = grid.tm * grid.tn;
  if (blocks == 1) {
    run_block(0);
    return;
  }
  // An exception (a failed buffer allocation) must not leave an OpenMP region: keep the first
  // and rethrow it on the calling thread.
  std::exception_ptr error;
#pragma omp parallel num_threads(blocks)
  {
    // The team this product really got, for the profiler's threads column.
    if (omp_get_thread_num() == 0) note_threads(omp_get_num_threads());
    // The runtime may give fewer threads than asked; the blocks are then shared round-robin.
    for (int t = omp_get_thread_num(); t < blocks; t += omp_get_num_threads()) {
      try {
        run_block(t);
      } catch (...) {
#pragma omp critical(prism_matmul_optimized_error)
        if (!error) error = std::current_exception();
      }
    }
  }
  if (error) std::rethrow_exception(error);
}

// The shapes the loop nest fits badly, rearranged (see the top of this file), then run.
template <class T>
void run_rearranged(Problem<T> p) {
  // A shared B (batch stride 0) under an A whose batches follow each other row after row is one
  // taller product: [batch * m, k] @ [k, n], and C is already laid out that way.
  if (p.batch > 1 && p.b_bs == 0 && p.a_bs == p.m * p.a_rs) {
    p.m *= p.batch;
    p.batch = 1;
  }
  // A narrow C (n = 10 classes: 10 of a vector's 16 lanes would do useful work) is computed
  // transposed, C^T = B^T @ A^T, when that wastes clearly less of the tiles: 128 x 10 pads to
  // 128 x 16 one way and 10 x 128 the other. Its stores then go through the scratch tile.
  // One column (C = A @ b) is computed as one row, c^T = b^T @ A^T: the matrix-vector path.
  if (p.m > 1 && (p.n == 1 || 4 * padded_area<T>(p.n, p.m) < 3 * padded_area<T>(p.m, p.n))) {
    if (p.row_sums) {  // A becomes the transposed product's B: its rows summed here, in place
      row_sums_direct(p, 0, p.m);
      p.row_sums = nullptr;
    }
    p = transposed(p);
  }
  run(p);
}

template <class T>
void matmul_optimized(const MatmulArgs<T>& a) {
  if (a.m == 0 || a.n == 0 || a.batch == 0) return;
  if (a.k == 0) {
    std::fill(a.c, a.c + a.batch * a.m * a.n, T(0));
    return;
  }
  run_rearranged(Problem<T>{a.a, a.b, a.c, a.batch, a.m, a.n, a.k, a.a_bs, a.a_rs, a.a_cs, a.b_bs,
                            a.b_rs, a.b_cs, a.m * a.n, a.n, 1});
}

}  // namespace

template <class T>
void linear_gemm(const LinearArgs<T>& a) {
  if (a.m == 0) return;
  if (a.n == 0) {  // no C, but A's rows may still be summed
    if (a.row_sums) {
      Problem<T> p{a.a, a.b, a.c, 1, a.m, 0, a.k, 0, a.a_rs, a.a_cs, 0, a.b_rs, a.b_cs, 0, 0, 1};
      p.relu_a = a.relu_a, p.row_sums = a.row_sums;
      row_sums_direct(p, 0, a.m);
    }
    return;
  }
  Problem<T> p{a.a, a.b, a.c, 1, a.m, a.n, a.k, 0, a.a_rs, a.a_cs, 0, a.b_rs, a.b_cs, 0, a.n, 1};
  p.relu_a = a.relu_a, p.relu_b = a.relu_b;
  p.bias = a.bias, p.bias_rs = 0, p.bias_cs = 1;
  p.mask = a.mask, p.mask_rs = a.mask_rs, p.mask_cs = a.mask_cs;
  p.row_sums = a.row_sums;
  if (a.k == 0) {  // an empty sum: C = 0, then the epilogue
    std::fill(a.c, a.c + a.m * a.n, T(0));
    apply_epilogue(p, 0, p.m);
    if (a.row_sums) std::fill(a.row_sums, a.row_sums + a.m, T(0));
    return;
  }
  run_rearranged(p);
}
template void linear_gemm<float>(const LinearArgs<float>&);
template void linear_gemm<double>(const LinearArgs<double>&);

void register_matmul_optimized(Registry& r) {
  r.op("matmul", Device::cpu)
      .add<MatmulArgs>("optimized", VariantTag::optimized,
                       "packed panels, register-blocked SIMD microkernel, OpenMP over blocks of C",
                       &matmul_optimized<float>, &matmul_optimized<double>);
}
PRISM_CPU_KERNELS(100, register_matmul_optimized);

}  // namespace prism::kernels::cpu
