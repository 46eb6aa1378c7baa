// The descriptions (OpInfo) of the int8 inference ops: matmul_int8 (int8 GEMM with the
// requantization fused) and quantize (float32 -> int8).
//
// matmul_int8's inputs are random int8 values over the whole symmetric range [-127, 127], so the
// int32 sums reach their largest magnitudes; the scales and the bias are random floats. The
// baseline is the naive loop, whose int32 sum is exact: every variant must give the same bits
// (the requantization is one shared function), and the tolerance is only the lab's required
// positive epsilon.
#include "kernels/costs.h"
#include "kernels/opinfo/op_info.h"
#include "kernels/ops/matmul_int8/op.h"

namespace prism::opinfo {
namespace {

constexpr const char* kSyntax = "MxKxN, optionally :t (a read transposed: column stride M)";

class MatmulInt8Case : public Case {
 public:
  MatmulInt8Case(int64_t m, int64_t k, int64_t n, bool ta, uint64_t seed) : out_(m * n) {
    InputRng rng(seed);
    a_.resize(static_cast<size_t>(m * k));
    w_.resize(static_cast<size_t>(n * k));
    for (auto& v : a_) v = static_cast<int8_t>(static_cast<int64_t>(rng.next_u64() % 255) - 127);
    for (auto& v : w_) v = static_cast<int8_t>(static_cast<int64_t>(rng.next_u64() % 255) - 127);
    w_scale_ = rng.vector(n, 1e-3f, 2e-2f);
    bias_ = rng.vector(n);
    args_ = {};
    args_.a = a_.data(), args_.w = w_.data(), args_.w_scale = w_scale_.data();
    args_.bias = bias_.data(), args_.out = out_.data();
    args_.a_scale = 0.0123f;
    args_.m = m, args_.n = n, args_.k = k;
    args_.a_rs = ta ? 1 : k, args_.a_cs = ta ? m : 1;
    args_.w_rs = k, args_.w_cs = 1;
  }
  void run(const kernels::KernelEntry& v) override {
    v.get<kernels::MatmulInt8Args, float>()(args_);
  }
  std::vector<Output> outputs() override { return {{"out", &out_}}; }
  profiler::Cost cost() const override {
    return costs::matmul_int8(args_.m, args_.n, args_.k, true);
  }

 private:
  CaseVector<int8_t> a_, w_;
  CaseVector<float> w_scale_, bias_;
  GuardedBuffer out_;
  kernels::MatmulInt8Args<float> args_;
};

std::unique_ptr<Case> make_matmul_int8(const std::string& size, uint64_t seed) {
  auto [dims_text, form] = split_suffix(size);
  auto d = parse_dims("matmul_int8", kSyntax, dims_text, 1, 3);
  if (d.size() == 2) throw Error("lab matmul_int8: bad size '" + size + "': expected " + kSyntax);
  if (d.size() == 1) d = {d[0], d[0], d[0]};
  if (!form.empty() && form != "t") {
    throw Error("lab matmul_int8: bad form ':" + form + "' in '" + size + "': expected " + kSyntax);
  }
  return std::make_unique<MatmulInt8Case>(d[0], d[1], d[2], form == "t", seed);
}

class QuantizeCase : public Case {
 public:
  QuantizeCase(int64_t numel, uint64_t seed) : out_(numel), q_(static_cast<size_t>(numel)) {
    InputRng rng(seed);
    // Past the saturation points on both sides: scale 0.01 maps [-2, 2) onto [-200, 200).
    x_ = rng.vector(numel, -2.f, 2.f);
    args_ = {};
    args_.x = x_.data(), args_.out = q_.data(), args_.scale = 0.01f, args_.numel = numel;
  }
  void run(const kernels::KernelEntry& v) override { v.get<kernels::QuantizeArgs, float>()(args_); }
  void collect() override {
    for (size_t i = 0; i < q_.size(); ++i) out_.data()[i] = q_[i];
  }
  std::vector<Output> outputs() override { return {{"q", &out_}}; }
  profiler::Cost cost() const override { return costs::quantize(args_.numel, 4); }

 private:
  CaseVector<float> x_;
  GuardedBuffer out_;
  CaseVector<int8_t> q_;
  kernels::QuantizeArgs<float> args_;
};

}  // namespace

static void add_quantized_op_infos(std::vector<OpInfo>& ops) {
  {
    OpInfo op;
    op.op = "matmul_int8";
    op.size_syntax = kSyntax;
    op.summary = "int8 x int8 -> int32 GEMM, requantized to float32 (naive vs VNNI)";
    // The MLP's layers at batch 64, the cnn's conv2 as im2col at batch 64, and a square GEMM.
    op.default_sizes = {"64x784x256", "7744x144x32", "1024"};
    op.validation_sizes = {"1x1x1", "1x7x5", "13x17x31", "3x784x256", "5x9x16:t", "67x257x33"};
    op.tolerance = 1e-9;
    op.tolerance_why =
        "bit-exact expected: the int32 sums are exact and every variant requantizes with the same "
        "function (one fma); the lab only needs a positive number here";
    op.make = make_matmul_int8;
    ops.push_back(std::move(op));
  }
  {
    OpInfo op;
    op.op = "quantize_int8";
    op.size_syntax = "N (elements)";
    op.summary = "float32 -> int8: divide by the scale, round half to even, saturate";
    op.default_sizes = {"1048576"};
    op.validation_sizes = {"1", "7", "4099", "200003"};
    op.tolerance = 1e-9;
    op.tolerance_why = "exact: one division and one round per element, no sums";
    op.make = [](const std::string& size, uint64_t seed) -> std::unique_ptr<Case> {
      auto d = parse_dims("quantize_int8", "N (elements)", size, 1, 1);
      return std::make_unique<QuantizeCase>(d[0], seed);
    };
    ops.push_back(std::move(op));
  }
}
const OpInfoFamily kQuantizedFamily(120, &add_quantized_op_infos);

}  // namespace prism::opinfo
