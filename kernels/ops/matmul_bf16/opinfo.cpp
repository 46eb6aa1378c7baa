// The description (OpInfo) of matmul_bf16: C (float32) = op(A) @ op(B), A and B bfloat16, with
// op = identity or transpose as for matmul ("MxKxN:tn"), and a batch ("BxMxKxN") whose B is
// shared (batch stride 0), the layout of a Linear layer applied to [B, T, C].
//
// The inputs are the lab's random floats in [-1, 1) rounded to bfloat16, so every variant and
// the baseline see the same exactly representable values. The baseline is the "reference"
// variant, which sums in float64 (kernels/ops/matmul_bf16/naive.cpp).
#include "kernels/costs.h"
#include "kernels/opinfo/op_info.h"
#include "kernels/ops/matmul_bf16/op.h"

namespace prism::opinfo {
namespace {

class MatmulBf16Case : public Case {
 public:
  MatmulBf16Case(int64_t batch, int64_t m, int64_t k, int64_t n, bool ta, bool tb, uint64_t seed)
      : c_(batch * m * n), batch_(batch) {
    InputRng rng(seed);
    a_ = to_bf16(rng.vector(batch * m * k));
    b_ = to_bf16(rng.vector(k * n));
    args_ = {};
    args_.a = a_.data();
    args_.b = b_.data();
    args_.c = c_.data();
    args_.batch = batch;
    args_.m = m;
    args_.n = n;
    args_.k = k;
    // A is m x k: stored row-major [m, k] (rs = k, cs = 1) or, transposed, as [k, m].
    args_.a_rs = ta ? 1 : k;
    args_.a_cs = ta ? m : 1;
    args_.a_bs = m * k;
    args_.b_rs = tb ? 1 : n;
    args_.b_cs = tb ? k : 1;
    args_.b_bs = 0;  // one B for every batch entry
  }

  void run(const kernels::KernelEntry& v) override {
    v.get<kernels::MatmulBf16Args, float>()(args_);
  }
  std::vector<Output> outputs() override { return {{"c", &c_}}; }
  profiler::Cost cost() const override {
    return costs::matmul_bf16({batch_, args_.m, args_.k}, {args_.k, args_.n});
  }

 private:
  static std::vector<BFloat16> to_bf16(const CaseVector<float>& v) {
    std::vector<BFloat16> out(static_cast<size_t>(v.size()));
    for (size_t i = 0; i < out.size(); ++i) out[i] = prism::to_bf16(v.data()[i]);
    return out;
  }
  std::vector<BFloat16> a_, b_;
  GuardedBuffer c_;
  int64_t batch_;
  kernels::MatmulBf16Args<float> args_;
};

constexpr const char* kSyntax = "N, MxKxN or BxMxKxN, optionally :nn, :nt, :tn or :tt";

std::unique_ptr<Case> make_matmul_bf16(const std::string& size, uint64_t seed) {
  auto [dims_text, form] = split_suffix(size);
  auto d = parse_dims("matmul_bf16", kSyntax, dims_text, 1, 4);
  if (d.size() == 2) {
    throw Error("lab matmul_bf16: bad size '" + size + "': expected " + kSyntax);
  }
  if (d.size() == 1) d = {d[0], d[0], d[0]};
  if (d.size() == 3) d.insert(d.begin(), 1);
  if (form.empty()) form = "nn";
  if (form.size() != 2 || (form[0] != 'n' && form[0] != 't') ||
      (form[1] != 'n' && form[1] != 't')) {
    throw Error("lab matmul_bf16: bad form ':" + form + "' in '" + size + "': expected " + kSyntax);
  }
  return std::make_unique<MatmulBf16Case>(d[0], d[1], d[2], d[3], form[0] == 't', form[1] == 't',
                                          seed);
}

}  // namespace

static void add_matmul_bf16_op_infos(std::vector<OpInfo>& ops) {
  OpInfo op;
  op.op = "matmul_bf16";
  op.size_syntax = kSyntax;
  op.summary =
      "C (fp32) = A @ B, A and B bfloat16: the mixed-precision GEMM (naive, blocked, optimized = "
      "AVX512-BF16 vdpbf16ps, amx = AMX tdpbf16ps)";
  op.default_sizes = {"128x784x256:nt", "256x128x784:tn", "256", "512", "1024", "2048"};
  op.validation_sizes = {"1",         "7x13x5",        "17x1x31",     "1x64x1",
                         "33x65x129", "33x65x129:tn",  "45x31x67:nt", "37x29x41:tt",
                         "3x13x7x5",  "2x25x31x37:nt", "200x300x150", "5x600x3"};
  // Inputs are exact bfloat16 values and each product is exact in float32, so a variant's only
  // error is its float32 sum: at most k 2^-24 sum_p |a_ip b_pj| (Higham's bound, any order),
  // against the float64 reference that is exact to well under one float32 ulp. Random signs
  // make the rounding errors a random walk, about sqrt(k) 2^-24 relative to the sum of
  // magnitudes; for the largest k here (600) and |C| of the order sqrt(k) / 3 that is ~1e-6 of
  // max |C|. 1e-4 leaves a wide margin, as matmul's float32 tolerance does, and is far below
  // what a misplaced pair or a dropped block of k does (errors of order 1e-1).
  op.tolerance = 1e-4;
  op.tolerance_why =
      "inputs exact in bf16 and products exact in fp32: only the fp32 sum rounds (k 2^-24 of the "
      "sum of |products| at worst, a random walk ~sqrt(k) 2^-24 in practice) against a float64 "
      "reference";
  op.make = make_matmul_bf16;
  ops.push_back(std::move(op));
}

const OpInfoFamily kMatmulBf16Family(110, &add_matmul_bf16_op_infos);

}  // namespace prism::opinfo
