// Exercise 10's checks: flash attention forward (op `attention`, AttentionArgs<float>).
//
// 1. The cases, through the tensor op as prism runs it (checker.cpp: a guarded run, a plain run,
//    a comparison with the `naive` variant). Each case compares `out`, or, where its label ends
//    in "lse", the log-sum-exp the kernel writes for backward; the guard checks both buffers in
//    every case (every element written, nothing written outside).
// 2. more_checks, on the kernel called directly with arguments built here, because what the
//    front end hands a learner's kernel cannot test memory: it gives a user-tagged variant a
//    workspace of the whole score matrix (attention_scores_workspace, tensor/ops/attention.cpp).
//    - workspace: at L = 300 the kernel gets only attention_tiled_workspace(300, d, 1) floats,
//      in a guarded buffer, so a kernel that keeps the L x L scores there writes past its end
//      (within the guard zone, which is reported) and is stopped before the large size;
//    - memory: at L = 2048 (an L x L float matrix is 16 MB) the same small workspace, and the
//      heap the kernel takes while it runs, measured three ways (the README says what each one
//      sees): this file's replacement of the global operator new/delete, prism's memory tracker
//      (tensor storage), and the process's resident-memory high-water mark.
// 3. Timing and tiers against `naive` and `flash` (checker.cpp, the lab), at the sizes below.
#include <malloc.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <new>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "exercises/checker/checker.h"
#include "exercises/checker/compare.h"
#include "kernels/registry.h"
#include "profiler/memory.h"
#include "tensor/ops.h"
#include "tensor/random.h"
#include "kernels/ops/attention/args.h"

// ---- the heap counter --------------------------------------------------------------------------
//
// The global operator new and delete are replaced for this exercise's programs only (this file
// is linked into them alone). Every C++ allocation of the process goes through them, from any
// thread and any library: std::vector, new[], std::make_unique. While `counting` is set they add
// and subtract each block's size as malloc reports it (malloc_usable_size: the request rounded
// up to malloc's granularity, a few bytes more) and keep the peak. They do not see malloc()
// called directly, nor mmap: the resident-memory check below does.
namespace {

std::atomic<bool> counting{false};
std::atomic<int64_t> heap_now{0}, heap_peak{0};

void note_new(void* p) {
  if (!p || !counting.load(std::memory_order_relaxed)) return;
  const int64_t n = static_cast<int64_t>(malloc_usable_size(p));
  const int64_t now = heap_now.fetch_add(n) + n;
  int64_t peak = heap_peak.load();
  while (now > peak && !heap_peak.compare_exchange_weak(peak, now)) {
  }
}

void note_delete(void* p) {
  if (!p || !counting.load(std::memory_order_relaxed)) return;
  heap_now.fetch_sub(static_cast<int64_t>(malloc_usable_size(p)));
}

// operator new's contract: never null; on failure call the new-handler and retry, or throw.
void* heap_allocate(std::size_t n, std::size_t align) {
  if (n == 0) n = 1;
  for (;;) {
    // aligned_alloc wants a size that is a multiple of the alignment.
    void* p = align <= alignof(std::max_align_t)
                  ? std::malloc(n)
                  : std::aligned_alloc(align, (n + align - 1) / align * align);
    if (p) {
      note_new(p);
      return p;
    }
    std::new_handler h = std::get_new_handler();
    if (!h) throw std::bad_alloc();
    h();
  }
}

void* heap_allocate_nothrow(std::size_t n, std::size_t align) noexcept {
  try {
    return heap_allocate(n, align);
  } catch (...) {
    return nullptr;
  }
}

void heap_free(void* p) noexcept {
  note_delete(p);
  std::free(p);
}

constexpr std::size_t kPlain = alignof(std::max_align_t);

}  // namespace

void* operator new(std::size_t n) {
  return heap_allocate(n, kPlain);
}
void* operator new[](std::size_t n) {
  return heap_allocate(n, kPlain);
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  return heap_allocate_nothrow(n, kPlain);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return heap_allocate_nothrow(n, kPlain);
}
void* operator new(std::size_t n, std::align_val_t a) {
  return heap_allocate(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return heap_allocate(n, static_cast<std::size_t>(a));
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return heap_allocate_nothrow(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return heap_allocate_nothrow(n, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept {
  heap_free(p);
}
void operator delete[](void* p) noexcept {
  heap_free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  heap_free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  heap_free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  heap_free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  heap_free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  heap_free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  heap_free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  heap_free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  heap_free(p);
}
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  heap_free(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  heap_free(p);
}

namespace prism::exercises {
namespace {

using kernels::AttentionArgs;

// ---- the cases ---------------------------------------------------------------------------------

// Case::ints: {causal, compare lse instead of out}; Case::inputs: q, k, v and, when the case sets
// its own scale, a one-element tensor holding it (otherwise the op's 1 / sqrt(d)).
Tensor call_attention(const Case& c) {
  const double scale = c.inputs.size() > 3 ? c.inputs[3].item<double>() : 0.0;
  AttentionResult r =
      attention_with_lse(c.inputs[0], c.inputs[1], c.inputs[2], c.ints[0] != 0, scale);
  return c.ints[1] ? r.lse : r.out;
}

// A tensor of the given shape from f(flat index), f drawing on the seeded generator as it likes.
template <class F>
Tensor make(const Dims& shape, F f) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = f(i);
  return from_vector(v, shape);
}

// Whole numbers drawn uniformly from [lo, hi]: dot products of them are exact in float32, so
// scores of thousands are exact too and only the softmax's own rounding is compared.
Tensor integers(const Dims& shape, int lo, int hi) {
  return make(shape, [&](int64_t) {
    const double u = default_generator().uniform();
    return static_cast<float>(lo + std::min<int>(hi - lo, static_cast<int>(u * (hi - lo + 1))));
  });
}

Case attn(std::string label, Tensor q, Tensor k, Tensor v, bool causal, std::string hint,
          bool lse = false, double scale = 0) {
  Case c{
      std::move(label), {std::move(q), std::move(k), std::move(v)}, {causal, lse}, std::move(hint)};
  if (scale != 0) c.inputs.push_back(full({1}, scale));
  return c;
}

std::vector<Case> attention_cases() {
  const std::string causal_hint =
      "with the causal mask query i sees keys 0..i: the diagonal j = i is visible, only j > i "
      "is masked (S_ij = -inf). Row 0 sees exactly key 0, so its output is v_0; every row has "
      "at least one key.";
  const std::string stride_hint =
      "q, k and v are views: element (b, h, r, c) of q is q[b*q_stride[0] + h*q_stride[1] + "
      "r*q_stride[2] + c*q_stride[3]], and the same with k_stride and v_stride. Only out and "
      "lse are contiguous.";
  const std::string tiles_hint =
      "this case spans several key blocks of any block size up to 128, so the running max grows "
      "after the first block. When it does, everything summed so far was measured against the "
      "old max: multiply both the running sum l and the accumulator acc by alpha = exp(m_old - "
      "m_new) before adding the new block's terms.";
  const std::string lse_hint =
      "lse_i = log sum_j exp(S_ij) = m_i + log l_i, the log of the softmax's denominator with "
      "the max added back (l_i was summed relative to m_i). Backward rebuilds P_ij = exp(S_ij - "
      "lse_i) from it, so out can be right while lse is wrong.";
  const std::string lk_hint =
      "lq and lk differ: q has lq rows, k and v have lk rows, out is [lq, d] and each query row "
      "has lk scores.";
  // Heads split from one projection, as MultiHeadAttention does: qkv [B, T, 3, H, d], then
  // q = qkv[:, :, 0].permute(0, 2, 1, 3) is [B, H, T, d] with strides (3THd, d, 3Hd, 1).
  const Tensor qkv = randn({2, 11, 3, 4, 16});
  auto head = [&](int i) { return qkv.select(2, i).permute({0, 2, 1, 3}); };
  // Scores rising along the keys: q_i ~ (1, ..., 1), k_j ~ 0.02 j (1, ..., 1), so S_ij grows
  // with j for every row and the last keys carry nearly all the weight.
  const int64_t lr = 257, dr = 32;
  Tensor q_rise = make({1, 1, lr, dr}, [](int64_t) {
    return static_cast<float>(1.0 + 0.1 * default_generator().normal());
  });
  Tensor k_rise = make({1, 1, lr, dr}, [&](int64_t i) {
    return static_cast<float>(0.02 * static_cast<double>(i / dr) +
                              0.1 * default_generator().normal());
  });
  const Tensor v_rise = randn({1, 1, lr, dr});
  // Scores of thousands either way: q, k whole numbers in [-3, 3], d = 16, scale 16.
  const Tensor q_big = integers({1, 2, 200, 16}, -3, 3), k_big = integers({1, 2, 200, 16}, -3, 3);
  const Tensor v_big = randn({1, 2, 200, 16});
  // Every score below -1000: q in [-3, -1], k in [1, 3], d = 16, scale 64.
  const Tensor q_neg = integers({1, 1, 150, 16}, -3, -1), k_neg = integers({1, 1, 150, 16}, 1, 3);
  const Tensor v_neg = randn({1, 1, 150, 16});
  // Every score between -3.6e32 and -4e31: q in [-1.5, -0.5], k in [0.5, 1.5] (real numbers,
  // so each row's largest score stands apart from the next by some 1e-3 of it, far more than
  // rounding), d = 16, scale 1e31. Each row's softmax puts all its weight on its top key.
  const auto uniform = [](const Dims& shape, double lo, double hi) {
    return make(shape, [&](int64_t) {
      return static_cast<float>(lo + (hi - lo) * default_generator().uniform());
    });
  };
  const Tensor q_far = uniform({1, 2, 40, 16}, -1.5, -0.5),
               k_far = uniform({1, 2, 150, 16}, 0.5, 1.5);
  const Tensor v_far = randn({1, 2, 150, 16});
  const Tensor q37 = randn({1, 2, 37, 3}), k37 = randn({1, 2, 37, 3}), v37 = randn({1, 2, 37, 3});
  const Tensor q13 = randn({2, 3, 13, 5}), k29 = randn({2, 3, 29, 5}), v29 = randn({2, 3, 29, 5});
  const Tensor q300 = randn({1, 2, 300, 64}), k300 = randn({1, 2, 300, 64});
  const Tensor v300 = randn({1, 2, 300, 64});
  return {
      attn("[1,1,1,1]", randn({1, 1, 1, 1}), randn({1, 1, 1, 1}), randn({1, 1, 1, 1}), false, ""),
      attn("[1,1,1,1] causal", randn({1, 1, 1, 1}), randn({1, 1, 1, 1}), randn({1, 1, 1, 1}), true,
           causal_hint),
      attn("[1,2,7,8]", randn({1, 2, 7, 8}), randn({1, 2, 7, 8}), randn({1, 2, 7, 8}), false, ""),
      attn("[1,2,7,8] causal", randn({1, 2, 7, 8}), randn({1, 2, 7, 8}), randn({1, 2, 7, 8}), true,
           causal_hint),
      attn("[2,3,13,5] q, 29 keys (lq != lk, d odd)", q13, k29, v29, false, lk_hint),
      attn("[1,2,37,3] causal", q37, k37, v37, true, causal_hint),
      attn("[2,4,11,16] heads split from a [2,11,3,4,16] projection", head(0), head(1), head(2),
           false, stride_hint),
      attn("[2,4,11,16] heads split from a projection, causal", head(0), head(1), head(2), true,
           stride_hint),
      attn("[1,2,9,8] k and v transposed views (column stride 9)", randn({1, 2, 9, 8}),
           randn({1, 2, 8, 9}).transpose(2, 3), randn({1, 2, 8, 9}).transpose(2, 3), false,
           stride_hint),
      attn("[1,1,1,64] one query, 300 keys", randn({1, 1, 1, 64}), randn({1, 1, 300, 64}),
           randn({1, 1, 300, 64}), false, tiles_hint),
      attn("[1,2,300,64] causal", q300, k300, v300, true, tiles_hint),
      attn("[2,2,130,80] causal", randn({2, 2, 130, 80}), randn({2, 2, 130, 80}),
           randn({2, 2, 130, 80}), true, tiles_hint),
      attn("[1,1,257,32] scores rising along the keys", q_rise, k_rise, v_rise, false, tiles_hint),
      attn("[1,2,200,16] scores in the thousands (scale 16)", q_big, k_big, v_big, false,
           "exp of a score above 88.7 overflows float32 to inf (and inf / inf = NaN). Subtract the "
           "running max m before exp: every exponent is then <= 0.",
           false, 16),
      attn("[1,1,150,16] causal, every score below -1000 (scale 64)", q_neg, k_neg, v_neg, true,
           "start the running max at -inf, not 0: with m = 0, exp(S_ij - m) underflows to 0 for "
           "every key, l stays 0 and out = 0 / 0. The first block's alpha = exp(-inf - m_new) "
           "is then 0, as it should be.",
           false, 64),
      // The extremes of a row of scores, each with the mistake it catches.
      attn("[1,2,40,16] q, 150 keys, every score near -1e32 (scale 1e31)", q_far, k_far, v_far,
           false,
           "the running max must start below every score a row can hold: at -inf. A large "
           "negative number in its place (-1e30, -1e9) is above these scores, so it stays the "
           "max, every exp(S_ij - m) underflows to 0, l = 0 and out = 0 / 0.",
           false, 1e31),
      attn(
          "[1,2,70,8] causal, q = 0: every score 0", zeros({1, 2, 70, 8}), randn({1, 2, 70, 8}),
          randn({1, 2, 70, 8}), true,
          "every score is 0, so every visible key has the same weight: out_i is the mean of v_0 .. "
          "v_i. A score equal to the running max adds exp(0) = 1 like any other: update with "
          "s >= m or max(), not only when s > m."),
      attn("[1,2,37,3] causal: lse", q37, k37, v37, true, lse_hint, true),
      attn("[2,3,13,5] q, 29 keys: lse", q13, k29, v29, false, lse_hint, true),
      attn("[1,2,300,64] causal: lse", q300, k300, v300, true, lse_hint, true),
      attn("[1,2,200,16] scores in the thousands: lse", q_big, k_big, v_big, false, lse_hint, true,
           16),
  };
}

// ---- the direct calls: workspace and memory -----------------------------------------------------

// A line of /proc/self/status ("VmHWM:   1234 kB") in KB; -1 when absent.
int64_t status_kb(const std::string& field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.compare(0, field.size(), field) == 0) return std::atoll(line.c_str() + field.size());
  }
  return -1;
}

// The resident-memory high-water mark of the process (VmHWM), set back to the current resident
// size by writing 5 to /proc/self/clear_refs (Linux 4.0 and later). Before that, malloc_trim
// hands the heap's free pages back to the system, so that a block the kernel allocates must
// fault in fresh pages (and be counted) instead of reusing pages already resident.
// Under a sanitizer the figure would include its shadow memory, which grows with every page the
// kernel reads, so it is not measured there.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr const char* kNoRss = "not measured under a sanitizer (its shadow memory grows too)";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr const char* kNoRss = "not measured under a sanitizer (its shadow memory grows too)";
#else
constexpr const char* kNoRss = nullptr;
#endif
#else
constexpr const char* kNoRss = nullptr;
#endif

// Starts a resident-memory measurement; returns the resident KB at the start, or -1 (and why).
int64_t rss_start(std::string& why) {
  if (kNoRss) {
    why = kNoRss;
    return -1;
  }
  malloc_trim(0);
  std::ofstream f("/proc/self/clear_refs");
  if (f) f << "5";
  f.close();
  const int64_t rss = status_kb("VmRSS:");
  if (!f || rss < 0 || status_kb("VmHWM:") < 0) {
    why = "not measured: /proc/self/clear_refs cannot be written here";
    return -1;
  }
  return rss;
}

// What one direct call of a kernel did.
struct Direct {
  BufferReport out, lse, ws;
  Comparison out_cmp, lse_cmp;
  int64_t heap_peak = 0;     // bytes, operator new/delete
  int64_t tracker_peak = 0;  // bytes, prism's memory tracker
  int64_t rss_growth = -1;   // bytes; -1: not measured (rss_why says why)
  std::string rss_why;
};

AttentionArgs<float> direct_args(const Tensor& q, const Tensor& k, const Tensor& v, bool causal) {
  AttentionArgs<float> a{};
  a.q = q.data<float>(), a.k = k.data<float>(), a.v = v.data<float>();
  a.batch = q.size(0), a.heads = q.size(1), a.lq = q.size(2), a.lk = k.size(2), a.d = q.size(3);
  for (int i = 0; i < 4; ++i) {
    a.q_stride[i] = q.strides()[i];
    a.k_stride[i] = k.strides()[i];
    a.v_stride[i] = v.strides()[i];
  }
  a.scale = 1.0 / std::sqrt(static_cast<double>(a.d));
  a.causal = causal;
  return a;
}

// The reference's out and lse on the same inputs, with the workspace that variant is given.
std::pair<Tensor, Tensor> reference(const kernels::KernelEntry& ref, AttentionArgs<float> a) {
  const bool tiled = ref.tag == kernels::VariantTag::fused;
  std::vector<float> ws(static_cast<size_t>(
      tiled ? kernels::attention_tiled_workspace(a.lq, a.d, omp_get_max_threads())
            : kernels::attention_scores_workspace(a.batch, a.heads, a.lq, a.lk)));
  Tensor out = empty({a.batch, a.heads, a.lq, a.d}), lse = empty({a.batch, a.heads, a.lq});
  a.out = out.data<float>(), a.lse = lse.data<float>();
  a.workspace = ws.data(), a.workspace_size = static_cast<int64_t>(ws.size());
  ref.get<AttentionArgs, float>()(a);
  return {out, lse};
}

// Calls `user` on [1, heads, L, L, d] random inputs with a guarded workspace of one thread's tiles,
// counting the memory it takes, and compares out and lse with `ref`.
Direct call_direct(const kernels::KernelEntry& user, const kernels::KernelEntry& ref, int64_t heads,
                   int64_t l, int64_t d) {
  const Tensor q = randn({1, heads, l, d}), k = randn({1, heads, l, d}),
               v = randn({1, heads, l, d});
  AttentionArgs<float> a = direct_args(q, k, v, false);
  const auto [want_out, want_lse] = reference(ref, a);
  const int64_t rows = heads * l;
  GuardedBuffer out(rows * d, checker_guard(rows * d)), lse(rows, checker_guard(rows));
  const int64_t ws_size = kernels::attention_tiled_workspace(l, d, 1);
  GuardedBuffer ws(ws_size, checker_guard(ws_size));
  ws.poison_as_scratch();
  a.out = out.data(), a.lse = lse.data(), a.workspace = ws.data(), a.workspace_size = ws_size;
  const auto fn = user.get<AttentionArgs, float>();

  Direct r;
  const int64_t rss0 = rss_start(r.rss_why);
  profiler::reset_peak(0);
  const int64_t tracked0 = profiler::memory_stats(0).live_bytes;
  heap_now = 0, heap_peak = 0;
  counting = true;
  fn(a);
  counting = false;
  r.heap_peak = heap_peak;
  r.tracker_peak = profiler::memory_stats(0).peak_bytes - tracked0;
  if (rss0 >= 0) r.rss_growth = 1024 * std::max<int64_t>(0, status_kb("VmHWM:") - rss0);

  r.out = out.inspect("out", true), r.lse = lse.inspect("lse", true);
  r.ws = ws.inspect("workspace", false);
  const auto as_tensor = [](const GuardedBuffer& b, const Dims& shape) {
    return from_vector(std::vector<float>(b.data(), b.data() + b.size()), shape);
  };
  r.out_cmp = compare(as_tensor(out, want_out.shape()), want_out);
  r.lse_cmp = compare(as_tensor(lse, want_lse.shape()), want_lse);
  return r;
}

std::string err(double e) {
  if (e == 0) return "0";
  if (std::isinf(e)) return "inf";
  return fmt::format("{:.1e}", e);
}

// What went wrong in a direct call's buffers or values, or "" when nothing did.
std::string direct_problem(const Direct& r, double tolerance) {
  for (const BufferReport* b : {&r.ws, &r.out, &r.lse}) {
    if (b->written_after > 0) {
      return fmt::format("wrote {} element(s) past the end of {} ({} has {}; highest {}[{}])",
                         b->written_after, b->name, b->name, b->size, b->name, b->highest);
    }
    if (b->written_before > 0) {
      return fmt::format("wrote {} element(s) before {} (lowest {}[{}])", b->written_before,
                         b->name, b->name, b->lowest);
    }
  }
  for (const BufferReport* b : {&r.out, &r.lse}) {
    if (b->unwritten > 0) {
      return fmt::format("{} of {} elements of {} never written", b->unwritten, b->size, b->name);
    }
  }
  if (!(r.out_cmp.error <= tolerance)) return "out error " + err(r.out_cmp.error);
  if (!(r.lse_cmp.error <= tolerance)) return "lse error " + err(r.lse_cmp.error);
  return "";
}

constexpr double kTolerance = 1e-4;
const char* const kToleranceWhy =
    "out is a weighted mean of v's rows and lse a log of a sum: float32 sums of up to L d "
    "products and L exps in another order (blocks, running rescales, another exp) differ by "
    "about 1e-6 of the largest value; a missing rescale or a mask off by one is off by 0.01 to 1";

// The checks that need the kernel called directly (the top of this file says why).
bool memory_checks(const kernels::KernelEntry& user, const Options&) {
  const auto& ops = kernels::registry().at("attention", Device::cpu);
  fmt::print(
      "\nyour kernel called directly, with a workspace of one thread's tiles, "
      "attention_tiled_workspace(L, d, 1) floats (kernels/args.h):\n");
  {
    // Small enough that a kernel keeping 2 x 300 x 300 scores in the workspace writes inside the
    // guard zone (the workspace and its guards hold 3 x 66092 floats), so the write is reported
    // instead of landing in other memory.
    const int64_t l = 300, d = 64;
    fmt::print("  workspace [1,2,{},{}], {} floats  ", l, d,
               kernels::attention_tiled_workspace(l, d, 1));
    std::fflush(stdout);
    const Direct r = call_direct(user, ops.at("naive"), 2, l, d);
    const std::string bad = direct_problem(r, kTolerance);
    if (!bad.empty()) {
      fmt::print("FAIL  {}\n\nhint (workspace): ", bad);
      if (r.ws.out_of_bounds()) {
        fmt::print(
            "your kernel used more workspace than a tiled kernel needs. The front end hands a "
            "learner's kernel room for every head's whole score matrix (B H lq lk floats, the "
            "naive variant's), because it cannot know yours is tiled; flash attention needs only "
            "a few tiles per thread: attention_tiled_workspace(lq, d, 1) floats (four 128 x d "
            "tiles, two 128 x 128, 2 x 128 + lq values). Keep tiles there, never the L x L "
            "scores; with several threads, give each its own slice of that size while the "
            "workspace has room, and tiles of its own beyond that.\n");
      } else {
        fmt::print(
            "with this workspace (one thread's tiles) your kernel's result is wrong or "
            "incomplete, though the cases above passed with the front end's larger one. Does it "
            "choose another path when workspace_size is small? Every path must compute the "
            "same out and lse.\n");
      }
      return false;
    }
    fmt::print("PASS  out error {}, lse error {} (against naive)\n", err(r.out_cmp.error),
               err(r.lse_cmp.error));
  }
  // L = 2048: one head's L x L float matrix is 16 MB, the tiles a few hundred KB, so the two
  // cannot be mistaken for each other. The limit, a quarter of the matrix, leaves room for
  // anything O(L) (a block of 128 score rows of all 2048 keys is 1 MB) and none for O(L^2).
  const int64_t l = 2048, d = 64;
  const int64_t matrix = 4 * l * l, limit = matrix / 4;
  fmt::print("  memory [1,1,{},{}], {} floats  ", l, d,
             kernels::attention_tiled_workspace(l, d, 1));
  std::fflush(stdout);
  const Direct r = call_direct(user, ops.at("flash"), 1, l, d);
  std::string bad = direct_problem(r, kTolerance);
  const bool too_much = r.heap_peak > limit || r.tracker_peak > limit || r.rss_growth > limit;
  const auto kb = [](int64_t bytes) { return fmt::format("{} KB", (bytes + 1023) / 1024); };
  if (bad.empty() && too_much) {
    // Which counters saw it: each sees allocations the others miss (the README says which).
    std::string seen;
    const auto add = [&](const char* what, int64_t bytes) {
      if (bytes > limit) seen += (seen.empty() ? "" : ", ") + fmt::format("{} {}", what, kb(bytes));
    };
    add("heap", r.heap_peak);
    add("prism's tracker", r.tracker_peak);
    add("resident", r.rss_growth);
    bad = "took O(L^2) memory: " + seen;
  }
  fmt::print("{}  {}\n", bad.empty() ? "PASS" : "FAIL",
             bad.empty() ? fmt::format("out error {}, lse error {} (against flash)",
                                       err(r.out_cmp.error), err(r.lse_cmp.error))
                         : bad);
  fmt::print("    peak heap during your kernel: {} (an L x L float matrix would be {}; limit {})\n",
             kb(r.heap_peak), kb(matrix), kb(limit));
  fmt::print("    prism's memory tracker (tensor storage): {}\n", kb(r.tracker_peak));
  fmt::print("    resident memory high-water mark: {}\n",
             r.rss_growth >= 0 ? "+" + kb(r.rss_growth) : r.rss_why);
  if (bad.empty()) return true;
  fmt::print("\nhint (memory): ");
  if (too_much) {
    fmt::print(
        "your kernel allocated O(L^2) memory while it ran, at L = {}: the score matrix flash "
        "attention exists to avoid. Keep only tiles: one block of scores (at most 128 x 128), the "
        "running max m and sum l of each query row, and its output accumulator; walk the keys "
        "block by block and fold each block into m, l and acc (the online softmax).\n",
        l);
  } else if (r.ws.out_of_bounds()) {
    fmt::print(
        "at L = {} your kernel wrote past a workspace of attention_tiled_workspace(lq, d, 1) "
        "floats, which it respected at L = 300: does a tile or a per-row array grow with L "
        "beyond 128 x 128 + lq?\n",
        l);
  } else {
    fmt::print(
        "at L = {} your kernel's result is wrong or incomplete, though it was right at L = 300. "
        "Look for a block size or an index that overflows at long sequences.\n",
        l);
  }
  return false;
}

// ---- the exercise
// --------------------------------------------------------------------------------

const char* const kTier1 =
    "a tiled kernel does naive's FLOPs without writing and rereading the L x L scores, so it "
    "should not be slower. If it is, look at the innermost loops: no division or function call "
    "per element, no index recomputed from all four strides per element (take a row pointer "
    "once per row).";
const char* const kTier2 =
    "make the inner loops vectorise: compute a block of scores in the i-k-j order of exercise 03 "
    "(pack the key block transposed, so S_i. += q_ic K^T_c. runs over contiguous keys) and acc_i. "
    "+= p_ij v_j. over contiguous columns; keep the row max and sum in 16 lanes, and take exp with "
    "a vectorisable polynomial (kernels/cpu/fast_exp.h), not expf per score.";
const char* const kTier3 =
    "keep a tile of sums in registers (exercise 04): 4 query rows x 32 keys of scores, or 4 rows "
    "x 32 columns of acc, summed over the whole inner loop, so each loaded key or value feeds 4 "
    "FMAs and the sums are loaded and stored once. Reuse each packed key and value block for a "
    "whole block of 64 to 128 query rows.";

Exercise make_flash_attention() {
  Exercise e;
  e.id = "10_flash_attention";
  e.file = "exercises/10_flash_attention/flash_attention.cpp";
  e.op = "attention";
  e.title =
      "flash attention forward: key blocks, the online softmax, no L x L matrix (AttentionArgs)";
  e.tolerance = kTolerance;
  e.tolerance_why = kToleranceWhy;
  e.arm_guard = &Guard<AttentionArgs>::arm;
  e.call = call_attention;
  e.cases = attention_cases;
  e.quick_timing_sizes = {"1x2x256x64:causal"};
  // Scores in L2 (256 KB a head); past it (4 MB a head, 32 MB in all); a long causal sequence
  // (16 MB a head), where half the blocks are masked.
  e.timing_sizes = {"1x8x256x64:causal", "1x8x1024x64", "1x2x2048x64:causal"};
  e.tiers = {{"beats naive", "naive", 1.0, kTier1},
             {"twice as fast as naive", "naive", 0.5, kTier2},
             {"within 1.5x of flash", "flash", 1.5, kTier3}};
  e.more_checks = memory_checks;
  return e;
}

}  // namespace

static const bool registered = add_exercise(make_flash_attention());

}  // namespace prism::exercises
