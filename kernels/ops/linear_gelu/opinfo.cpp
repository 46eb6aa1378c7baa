// The description (OpInfo) of linear_gelu, y = gelu(x W^T + b), for the lab and the
// op-description tests (the math is in args.h). Size "RxIxO": rows, in and out features.
#include "kernels/opinfo/op_info.h"
#include "kernels/ops/linear_gelu/op.h"

namespace prism::opinfo {
namespace {

constexpr const char* kLinearSyntax = "RxIxO (rows, in features, out features)";

class LinearGeluCase : public Case {
 public:
  LinearGeluCase(int64_t rows, int64_t in, int64_t out, uint64_t seed)
      : z_(rows * out), y_(rows * out) {
    InputRng rng(seed);
    x_ = rng.vector(rows * in);
    w_ = rng.vector(out * in, -0.1f, 0.1f);
    b_ = rng.vector(out);
    a_ = {};
    a_.x = x_.data(), a_.weight = w_.data(), a_.bias = b_.data(), a_.z = z_.data(),
    a_.y = y_.data();
    a_.rows = rows, a_.in = in, a_.out = out;
    a_.x_rs = in, a_.x_cs = 1, a_.w_rs = in, a_.w_cs = 1;
  }
  void run(const kernels::KernelEntry& v) override { v.get<kernels::LinearGeluArgs, float>()(a_); }
  std::vector<Output> outputs() override { return {{"y", &y_}, {"z", &z_}}; }
  profiler::Cost cost() const override {
    return costs::linear_gelu(a_.rows, a_.in, a_.out, true, true, 4);
  }

 private:
  CaseVector<float> x_, w_, b_;
  GuardedBuffer z_, y_;
  kernels::LinearGeluArgs<float> a_;
};

void add_linear_gelu_op_infos(std::vector<OpInfo>& ops) {
  {
    OpInfo op;
    op.op = kernels::ops::linear_gelu.name;
    op.size_syntax = kLinearSyntax;
    op.summary = "gelu(x W^T + b): GEMM then bias then GELU passes vs one fused pass";
    op.default_sizes = {"128x784x256", "1024x768x3072", "4096x256x1024"};
    op.validation_sizes = {"1x1x1", "7x13x5", "33x65x129", "65x257x300"};
    op.tolerance_why =
        "the fused kernel's GEMM sums up to 257 products in another order than the unfused "
        "matmul, and both take GELU's tanh from the same scalar std::tanh";
    op.make = [](const std::string& size, uint64_t seed) -> std::unique_ptr<Case> {
      auto d = parse_dims(kernels::ops::linear_gelu.name, kLinearSyntax, size, 3, 3);
      return std::make_unique<LinearGeluCase>(d[0], d[1], d[2], seed);
    };
    ops.push_back(std::move(op));
  }
}

}  // namespace

const OpInfoFamily kLinearGeluFamily(803, &add_linear_gelu_op_infos);

}  // namespace prism::opinfo
