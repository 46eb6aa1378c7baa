// The description (OpInfo) of matmul: C = op(A) @ op(B) with op = identity or transpose, as the
// backward pass calls it (dA = dC @ B^T is the ":nt" form, dB = A^T @ dC the ":tn" form).
//
// Size: "N" (square) or "MxKxN", with an optional ":XY" where X, Y are n (normal) or t
// (transposed) for A and B, as in BLAS. A transposed operand is stored K x M (or N x K) and
// passed as a strided view, exactly the view a backward pass hands the kernel.
#include "kernels/costs.h"
#include "kernels/opinfo/op_info.h"
#include "kernels/ops/matmul/op.h"

namespace prism::opinfo {
namespace {

class MatmulCase : public Case {
 public:
  MatmulCase(int64_t m, int64_t k, int64_t n, bool ta, bool tb, uint64_t seed) : c_(m * n) {
    InputRng rng(seed);
    a_ = rng.vector(m * k);
    b_ = rng.vector(k * n);
    args_ = {};
    args_.a = a_.data();
    args_.b = b_.data();
    args_.c = c_.data();
    args_.batch = 1;
    args_.m = m;
    args_.n = n;
    args_.k = k;
    // A is m x k: stored row-major [m, k] (rs = k, cs = 1) or, transposed, as [k, m].
    args_.a_rs = ta ? 1 : k;
    args_.a_cs = ta ? m : 1;
    args_.b_rs = tb ? 1 : n;
    args_.b_cs = tb ? k : 1;
    args_.a_bs = m * k;
    args_.b_bs = k * n;
  }

  void run(const kernels::KernelEntry& v) override { v.get<kernels::MatmulArgs, float>()(args_); }
  std::vector<Output> outputs() override { return {{"c", &c_}}; }
  profiler::Cost cost() const override {
    return costs::matmul({args_.m, args_.k}, {args_.k, args_.n}, 4);
  }

 private:
  CaseVector<float> a_, b_;
  GuardedBuffer c_;
  kernels::MatmulArgs<float> args_;
};

constexpr const char* kSyntax = "N or MxKxN, optionally :nn, :nt, :tn or :tt";

std::unique_ptr<Case> make_matmul(const std::string& size, uint64_t seed) {
  auto [dims_text, form] = split_suffix(size);
  auto d = parse_dims("matmul", kSyntax, dims_text, 1, 3);
  if (d.size() == 2) {
    throw Error("lab matmul: bad size '" + size + "': expected " + kSyntax);
  }
  if (d.size() == 1) d = {d[0], d[0], d[0]};
  if (form.empty()) form = "nn";
  if (form.size() != 2 || (form[0] != 'n' && form[0] != 't') ||
      (form[1] != 'n' && form[1] != 't')) {
    throw Error("lab matmul: bad form ':" + form + "' in '" + size + "': expected " + kSyntax);
  }
  return std::make_unique<MatmulCase>(d[0], d[1], d[2], form[0] == 't', form[1] == 't', seed);
}

}  // namespace

static void add_matmul_op_infos(std::vector<OpInfo>& ops) {
  OpInfo op;
  op.op = "matmul";
  op.size_syntax = kSyntax;
  op.summary = "C = A @ B (the ladder: naive, reordered, blocked, optimized, reference)";
  // The MLP's forward and backward shapes, then square sizes.
  op.default_sizes = {"128x784x256:nt", "256x128x784:tn", "256", "512", "1024"};
  op.validation_sizes = {"1",           "7x13x5",      "17x1x31",
                         "1x64x1",      "33x65x129",   "33x65x129:tn",
                         "45x31x67:nt", "37x29x41:tt", "200x300x150"};
  op.tolerance_why =
      "each output sums k products; blocked, packed and Eigen kernels split and order that sum "
      "differently (and use FMAs), so float32 results differ by roundings that grow with k";
  op.make = make_matmul;
  ops.push_back(std::move(op));
}

const OpInfoFamily kMatmulFamily(100, &add_matmul_op_infos);

}  // namespace prism::opinfo
