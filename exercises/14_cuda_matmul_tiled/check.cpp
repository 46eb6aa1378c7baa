// Exercise 14's checks: a tiled shared-memory matmul in CUDA, registered as a CUDA variant of op
// `matmul` (cuda_exercise.h). Compiled into this exercise's programs only, and only in a build
// with the CUDA backend (the .cu files need nvcc).
//
// Without a usable GPU it says why in one line, "cannot run on this machine: no CUDA device
// (...)", and returns kCannotRunHere: ctest shows the exercise's tests as skipped. With one:
//   1. cases: each runs the learner's kernel and the cuBLAS variant ("reference") on the same
//      inputs, in CUDA managed memory (kernels/opinfo/case_memory.h), the learner's output in a
//      guarded buffer (guard zones of twice its size, every element a signalling NaN first:
//      guarded_buffer.h), and compares them (compare.h): odd sizes, 1, primes, non-multiples of
//      the tile, transposed and strided views through MatmulArgs' strides, batches, A shared by
//      a batch, a batch longer than the grid's z;
//   2. if all pass, times the learner's kernel beside the CUDA variants (naive, tiled,
//      optimized, cuBLAS) with the kernel lab on the cuda device (`prism lab matmul --device
//      cuda`), and grades it against the tiers below (grade.h).
#include <fmt/core.h>

#include <algorithm>
#include <exception>
#include <string>
#include <vector>

#include "exercises/checker/checker.h"
#include "exercises/checker/compare.h"
#include "kernels/ops/matmul/args.h"
#include "kernels/gpu_runtime.h"
#include "kernels/lab/lab.h"
#include "kernels/opinfo/case_memory.h"
#include "kernels/opinfo/guarded_buffer.h"
#include "kernels/registry.h"
#include "tensor/ops.h"
#include "tensor/random.h"

namespace prism::exercises {
namespace {

using kernels::MatmulArgs;

constexpr const char* kFile = "exercises/14_cuda_matmul_tiled/cuda_matmul_tiled.cu";
constexpr double kTolerance = 1e-4;
constexpr const char* kToleranceWhy =
    "float32 sums of k products in another order differ by about 1e-6 of the largest entry; an "
    "indexing mistake or a stale tile is off by O(1)";

// ---- the cases ---------------------------------------------------------------------------------

// How an operand (rows x cols) is laid out in memory.
enum class Layout {
  rows,        // row-major: stride cols, 1
  transposed,  // stored (cols x rows) and read transposed: stride 1, rows
  every_2nd,   // every 2nd column of a row-major (rows x 2 cols): stride 2 cols, 2
};

struct GpuCase {
  std::string label;
  int64_t batch, m, k, n;
  Layout a_layout = Layout::rows, b_layout = Layout::rows;
  bool a_shared = false;  // one A for the whole batch (a_bs = 0)
  std::string hint;
};

std::vector<GpuCase> gpu_cases() {
  const std::string view_hint =
      "the operand is a view: A[i][p] is a[i * a_rs + p * a_cs] and B[p][j] is b[p * b_rs + j * "
      "b_cs], whatever the strides (a transposed view has a_rs = 1). Use the strides in every "
      "load.";
  const std::string edge_hint =
      "these sizes are not multiples of the tile, so the last tile of each row, column and k "
      "step sticks out of the matrices: load 0 for elements outside them, and store only where "
      "i < m and j < n.";
  return {
      {"[1,1] @ [1,1]", 1, 1, 1, 1, Layout::rows, Layout::rows, false, edge_hint},
      {"[1,7] @ [7,1]", 1, 1, 7, 1, Layout::rows, Layout::rows, false, edge_hint},
      {"[7,1] @ [1,5] (k = 1)", 1, 7, 1, 5, Layout::rows, Layout::rows, false, edge_hint},
      {"[13,17] @ [17,19]", 1, 13, 17, 19, Layout::rows, Layout::rows, false,
       "m, k and n all differ: C is m x n, so its row length is n (not k)."},
      {"[13,17]^T view @ [17,19]^T view", 1, 13, 17, 19, Layout::transposed, Layout::transposed,
       false, view_hint},
      {"[20,15] every 2nd column @ [15,9]", 1, 20, 15, 9, Layout::every_2nd, Layout::rows, false,
       view_hint},
      {"batch [3,5,7] @ [3,7,4]", 3, 5, 7, 4, Layout::rows, Layout::rows, false,
       "batch > 1: matrix b of the batch starts at a + b * a_bs, b + b * b_bs, c + b * m * n."},
      {"batch [1,5,6] @ [3,6,4] (A shared: a_bs = 0)", 3, 5, 6, 4, Layout::rows, Layout::rows, true,
       "A is broadcast over the batch, so a_bs is 0: use the batch strides as given."},
      {"[64,64] @ [64,64]", 1, 64, 64, 64, Layout::rows, Layout::rows, false, ""},
      {"[65,129] @ [129,67]", 1, 65, 129, 67, Layout::rows, Layout::rows, false, edge_hint},
      {"[257,129] @ [129,263]", 1, 257, 129, 263, Layout::rows, Layout::rows, false, edge_hint},
      {"[31,520] @ [520,33] (long k)", 1, 31, 520, 33, Layout::rows, Layout::rows, false,
       edge_hint},
      {"[512,512] @ [512,512]", 1, 512, 512, 512, Layout::rows, Layout::rows, false,
       "256 blocks, 16 steps along k each: a race on the shared tiles shows here. Every thread "
       "must have stored its elements before any thread reads the tiles (__syncthreads() after "
       "the loads), and every thread must be done reading before the next step overwrites them "
       "(__syncthreads() after the products)."},
      {"[100,300]^T view @ [300,200]^T view", 1, 100, 300, 200, Layout::transposed,
       Layout::transposed, false, view_hint},
      {"batch 70000 of [2,3] @ [3,2]", 70000, 2, 3, 2, Layout::rows, Layout::rows, false,
       "the grid's z holds at most 65535 blocks, so here the launch covers part of the batch: "
       "loop b from blockIdx.z in steps of gridDim.z."},
  };
}

// One case's buffers, in CUDA managed memory (valid on the host and the GPU): A, B as laid out,
// C for the learner's kernel in a long-guarded buffer, C for cuBLAS in a short-guarded one.
struct GpuBuffers {
  opinfo::CaseVector<float> a, b;
  GuardedBuffer c_user, c_ref;
  MatmulArgs<float> args{};
};

// Elements a (rows x cols) operand of `layout` occupies, and its strides.
int64_t stored(Layout l, int64_t rows, int64_t cols) {
  return l == Layout::every_2nd ? rows * 2 * cols : rows * cols;
}
void strides(Layout l, int64_t rows, int64_t cols, int64_t* rs, int64_t* cs) {
  switch (l) {
    case Layout::rows:
      *rs = cols, *cs = 1;
      return;
    case Layout::transposed:
      *rs = 1, *cs = rows;
      return;
    case Layout::every_2nd:
      *rs = 2 * cols, *cs = 2;
      return;
  }
}

void make_buffers(const GpuCase& c, Generator& g, GpuBuffers& buf) {
  opinfo::ScopedCaseDevice on_gpu(Device::cuda);  // every buffer made here is managed memory
  const int64_t a_one = stored(c.a_layout, c.m, c.k), b_one = stored(c.b_layout, c.k, c.n);
  buf.a.resize(static_cast<size_t>(a_one * (c.a_shared ? 1 : c.batch)));
  buf.b.resize(static_cast<size_t>(b_one * c.batch));
  for (float& v : buf.a) v = static_cast<float>(g.normal());
  for (float& v : buf.b) v = static_cast<float>(g.normal());
  const int64_t size = c.batch * c.m * c.n;
  buf.c_user = GuardedBuffer(size, checker_guard(size));
  buf.c_ref = GuardedBuffer(size);
  MatmulArgs<float>& a = buf.args;
  a.a = buf.a.data();
  a.b = buf.b.data();
  a.batch = c.batch;
  a.m = c.m;
  a.n = c.n;
  a.k = c.k;
  strides(c.a_layout, c.m, c.k, &a.a_rs, &a.a_cs);
  strides(c.b_layout, c.k, c.n, &a.b_rs, &a.b_cs);
  a.a_bs = c.a_shared ? 0 : a_one;
  a.b_bs = b_one;
}

// A host copy of a guarded buffer's data as a [batch, m, n] tensor, for compare.h.
Tensor as_tensor(const GuardedBuffer& buf, const GpuCase& c) {
  std::vector<float> v(buf.data(), buf.data() + buf.size());
  return from_vector(v, {c.batch, c.m, c.n});
}

std::string error_str(double e) {
  if (e == 0) return "0";
  return e > 1e300 ? "inf" : fmt::format("{:.1e}", e);
}

// What one case came to: ok, or the line's detail and the hint for it.
struct CaseVerdict {
  bool ok = false;
  bool fault = false;  // the kernel faulted: the CUDA context is unusable from here on
  std::string detail, hint;
};

CaseVerdict check_case(const GpuCase& c, const kernels::KernelEntry& user,
                       const kernels::KernelEntry& ref, Generator& g) {
  CaseVerdict v;
  GpuBuffers buf;
  make_buffers(c, g, buf);
  MatmulArgs<float> a = buf.args;
  a.c = buf.c_ref.data();
  ref.get<MatmulArgs, float>()(a);
  kernels::gpu::synchronize();
  a.c = buf.c_user.data();
  try {
    user.get<MatmulArgs, float>()(a);  // the wrapper waits for the kernel (cuda_exercise.h)
  } catch (const std::exception& e) {
    v.fault = true;
    v.detail = std::string("threw: ") + e.what();
    v.hint =
        "the kernel failed to launch or faulted. A launch error names the configuration (at "
        "most 1024 threads per block; grid y and z at most 65535); an illegal address is a read "
        "or write outside the buffers: check every load and store against m, n and k, and the "
        "strides. A fault leaves the GPU unusable for this program, so the cases after it are "
        "skipped.";
    return v;
  }
  const BufferReport r = buf.c_user.inspect("C", true);
  if (r.out_of_bounds()) {
    v.detail = fmt::format(
        "wrote {} element(s) outside C ({} before it, {} past its end; C has "
        "{}, highest C[{}])",
        r.written_before + r.written_after, r.written_before, r.written_after, r.size, r.highest);
    v.hint =
        "your kernel wrote outside C: threads of a tile that sticks out of the matrix must not "
        "store (only where i < m and j < n). In a real program that write lands in other "
        "memory.";
    return v;
  }
  if (r.unwritten > 0) {
    v.detail = fmt::format("{} of {} elements of C never written (first: C[{}])", r.unwritten,
                           r.size, r.first_unwritten);
    v.hint = r.unwritten == r.size
                 ? "your kernel wrote none of C. If the TODO in " + std::string(kFile) +
                       " is still to do, that is why."
                 : "some outputs were never written: look at the edges (the last partial tile) "
                   "and at the batch.";
    if (r.unwritten < r.size && !c.hint.empty()) v.hint += "\nThis case: " + c.hint;
    return v;
  }
  const Comparison cmp = compare(as_tensor(buf.c_user, c), as_tensor(buf.c_ref, c));
  if (!(cmp.error <= kTolerance)) {
    v.detail = fmt::format("error {} at {}: got {:.7g}, want {:.7g}", error_str(cmp.error),
                           index_str({c.batch, c.m, c.n}, cmp.worst), cmp.got, cmp.want);
    v.hint = fmt::format(
        "the result differs from cuBLAS's (the 'reference' variant) by {} (tolerance {}). A NaN "
        "where cuBLAS has a number is an element read before it was written (C arrives "
        "uninitialised, as NaN here).",
        error_str(cmp.error), error_str(kTolerance));
    if (!c.hint.empty()) v.hint += "\nThis case: " + c.hint;
    return v;
  }
  v.ok = true;
  v.detail = "error " + error_str(cmp.error);
  return v;
}

// ---- the tiers ---------------------------------------------------------------------------------

// Set before the first GPU run and kept after it: on an NVIDIA H200 (2026-11-26) the solution
// reached tier 1 of 3 (README.md, "Performance tiers").
std::vector<Tier> gpu_tiers() {
  return {
      {"beats naive", "naive", 1.0,
       "stage tiles of A and B in shared memory: each element is then read from global memory "
       "once per tile of 32 outputs instead of once per output."},
      {"within 1.25x of prism's tiled kernel", "tiled", 1.25,
       "the loads must be coalesced (the 32 threads of a warp read 32 consecutive floats) and "
       "the product loop unrolled (#pragma unroll). The reference solution does both and still "
       "measured 1.29x and 1.46x of prism's kernel on an H200 (1024, 4096), the cause not yet "
       "established: compare with kernels/ops/matmul/tiled.cu (launch bounds, a "
       "one-dimensional grid of tiles, no padding) and time each difference."},
      {"within 3x of cuBLAS", "reference", 3.0,
       "one output per thread costs two shared-memory loads per multiply-add. Let each thread "
       "compute a small block of C (4 x 4 or 8 x 8) in registers, so each value loaded from "
       "shared memory feeds 4 or 8 multiply-adds (kernels/ops/matmul/tile.cuh)."},
  };
}

// The CUDA variants the learner's kernel is timed beside, where this build has them.
std::vector<std::string> timed_variants(const kernels::OpKernels& k, const std::string& user) {
  std::vector<std::string> v = {user};
  for (const char* name : {"naive", "tiled", "optimized", "reference"}) {
    const kernels::KernelEntry* e = k.find(name);
    if (e && e->tag != kernels::VariantTag::user && e->has(DType::f32)) v.push_back(e->name);
  }
  return v;
}

int time_and_grade(const std::string& user, const Options& o, std::string& next_tier) {
  lab::LabOptions lo;
  lo.op = "matmul";
  lo.device = Device::cuda;
  // Quick: one size in L2. Full: in the 50 MB L2 of an H100, past it, and B transposed (the
  // layout whose loads a kernel must coalesce on purpose).
  lo.sizes = o.quick ? std::vector<std::string>{"256"}
                     : std::vector<std::string>{"1024", "4096", "2048:nt"};
  lo.variants = timed_variants(kernels::registry().at("matmul", Device::cuda), user);
  lo.threads = o.threads;
  lo.repetitions = o.runs > 0 ? o.runs : o.quick ? 3 : 15;
  lo.min_sample_ms = o.quick ? 2 : 20;
  lo.max_variant_s = o.max_seconds > 0
                         ? o.max_seconds
                         : (o.quick ? 2.0 : 10.0) * std::max(1.0, lo.repetitions / 15.0);
  lo.seed = o.seed;
  fmt::print(
      "\ntiming (the kernel lab on the GPU: prism lab matmul --device cuda --sizes ...): the "
      "kernels alone on managed buffers, median of {} interleaved samples of at least {} ms "
      "each (a sample: launches back to back, then one wait), with its 95% interval. Yours "
      "waits for the GPU after each call (cuda_exercise.h): a few microseconds more per call.\n",
      lo.repetitions, lo.min_sample_ms);
  lab::LabResult r;
  try {
    r = lab::run_lab(lo);
  } catch (const std::exception& e) {
    fmt::print("the lab stopped: {}\n", e.what());
    next_tier = "not graded";
    return 0;
  }
  fmt::print("{}", lab::format_lab(r));
  const std::vector<Tier> tiers = gpu_tiers();
  const SamplingLimits limits = sampling_limits(o, lo.repetitions);
  fmt::print("\n");
  Grade g = grade_until_decided(tiers, r, user, lo, limits, o.seed,
                                [](const std::string& line) { fmt::print("{}\n", line); });
  g.lab_tool = "build/prism_with_cuda_matmul_tiled";
  fmt::print("{}", format_grade(tiers, g));
  next_tier = g.reached >= g.of ? ""
              : !g.note.empty() ? "not graded"
              : g.inconclusive  ? "inconclusive"
                                : "missed";
  return g.reached;
}

// ---- the whole check ---------------------------------------------------------------------------

Outcome run_cuda_matmul_tiled(const Options& o) {
  const int n_tiers = static_cast<int>(gpu_tiers().size());
  if (!kernels::gpu::available()) {
    fmt::print("cannot run on this machine: no CUDA device ({})\n",
               kernels::gpu::unavailable_reason());
    return {kCannotRunHere, 0, 0};
  }
  const kernels::OpKernels& k = kernels::registry().at("matmul", Device::cuda);
  const kernels::KernelEntry* user = nullptr;
  for (const kernels::KernelEntry& e : k.entries()) {
    if (e.tag == kernels::VariantTag::user) user = &e;
  }
  const kernels::KernelEntry* ref = k.find("reference");
  if (!user || !ref) {
    fmt::print(stderr,
               "checker: {} is registered for op 'matmul' on cuda in this program. Keep the line\n"
               "  PRISM_REGISTER_CUDA_MATMUL(<your launch function>);\n"
               "at the end of {}.\n",
               user ? "no cuBLAS variant" : "no kernel of yours", kFile);
    return {2};
  }
  const kernels::gpu::DeviceInfo info = kernels::gpu::device_info();
  fmt::print(
      "\nkernel '{}' for op 'matmul' on {} (compute capability {}.{}), against cuBLAS "
      "('reference', float32 without TF32); tolerance {}: {}\n",
      user->name, info.name, info.compute_major, info.compute_minor, error_str(kTolerance),
      kToleranceWhy);
  const std::vector<GpuCase> cases = gpu_cases();
  size_t width = 0;
  for (const GpuCase& c : cases) width = std::max(width, c.label.size());
  Generator g(o.seed);
  int passed = 0;
  bool fault = false;
  std::string first_hint;
  for (const GpuCase& c : cases) {
    fmt::print("  {:<{}}  ", c.label, width);
    std::fflush(stdout);
    note_step(o, "case " + c.label);
    if (fault) {
      fmt::print("SKIP  (a CUDA fault above left the GPU unusable)\n");
      continue;
    }
    const CaseVerdict v = check_case(c, *user, *ref, g);
    fault = v.fault;
    passed += v.ok;
    fmt::print("{}  {}\n", v.ok ? "PASS" : "FAIL", v.detail);
    if (!v.ok && first_hint.empty()) first_hint = "hint (" + c.label + "): " + v.hint;
  }
  const int n = static_cast<int>(cases.size());
  fmt::print("{} of {} cases passed.\n", passed, n);
  if (passed < n) {
    fmt::print("\n{}\n", first_hint);
    return {1, 0, o.timing ? n_tiers : 0};
  }
  if (!o.timing) return {0, 0, n_tiers, "not graded"};
  note_step(o, "timing (the performance tiers)");
  std::string next;
  const int reached = time_and_grade(user->name, o, next);
  return {0, reached, n_tiers, next};
}

Exercise make_cuda_matmul_tiled() {
  Exercise ex;
  ex.id = "14_cuda_matmul_tiled";
  ex.file = kFile;
  ex.op = "matmul";
  ex.title = "matmul in CUDA, in 32 x 32 tiles staged through shared memory (MatmulArgs)";
  ex.tolerance = kTolerance;
  ex.tolerance_why = kToleranceWhy;
  ex.run = run_cuda_matmul_tiled;
  return ex;
}

}  // namespace

static const bool registered = add_exercise(make_cuda_matmul_tiled());

}  // namespace prism::exercises
