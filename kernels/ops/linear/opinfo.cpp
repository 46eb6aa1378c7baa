// The description (OpInfo) of linear, a ReLU-then-Linear layer's three products, for the lab
// and the op-description tests (the math is in args.h). Each variant gets the scratch the front
// end would give it: the unfused (naive-tagged) one a contiguous copy of each operand it ReLUs.
#include "kernels/opinfo/op_info.h"
#include "kernels/ops/linear/op.h"

namespace prism::opinfo {
namespace {

constexpr const char* kReluLinearSyntax =
    "RxIxO[:dx|:dw] (rows, in, out: y = relu(x) W^T + b; :dx its input gradient, masked; :dw "
    "its weight and bias gradients)";

// One of the three products of a ReLU-then-Linear layer (kernels/args.h, LinearArgs), as the
// op's front end calls them: x [R, I], W [O, I], g [R, O] contiguous.
class LinearCase : public Case {
 public:
  enum class Form { forward, dx, dw };
  LinearCase(int64_t rows, int64_t in, int64_t out, Form form, uint64_t seed) : form_(form) {
    InputRng rng(seed);
    x_ = rng.vector(rows * in);
    w_ = rng.vector(out * in, -0.1f, 0.1f);
    b_ = rng.vector(out);
    g_ = rng.vector(rows * out);
    a_ = {};
    if (form == Form::forward) {  // y [R, O] = relu(x) @ W^T + b
      a_.a = x_.data(), a_.b = w_.data(), a_.m = rows, a_.n = out, a_.k = in;
      a_.a_rs = in, a_.a_cs = 1, a_.b_rs = 1, a_.b_cs = in;
      a_.relu_a = true, a_.bias = b_.data();
    } else if (form == Form::dx) {  // dx [R, I] = (g @ W) * [x > 0]
      a_.a = g_.data(), a_.b = w_.data(), a_.m = rows, a_.n = in, a_.k = out;
      a_.a_rs = out, a_.a_cs = 1, a_.b_rs = in, a_.b_cs = 1;
      a_.mask = x_.data(), a_.mask_rs = in, a_.mask_cs = 1;
    } else {  // dW [O, I] = g^T @ relu(x), and db [O] = g's column sums
      a_.a = g_.data(), a_.b = x_.data(), a_.m = out, a_.n = in, a_.k = rows;
      a_.a_rs = 1, a_.a_cs = out, a_.b_rs = in, a_.b_cs = 1;
      a_.relu_b = true;
      db_ = GuardedBuffer(out);
      a_.row_sums = db_.data();
    }
    c_ = GuardedBuffer(a_.m * a_.n);
    a_.c = c_.data();
    scratch_ = CaseVector<float>(static_cast<size_t>(workspace_elements()));
  }
  void run(const kernels::KernelEntry& v) override {
    kernels::LinearArgs<float> a = a_;
    if (naive_tag(v)) a.workspace = scratch_.data(), a.workspace_size = workspace_elements();
    v.get<kernels::LinearArgs, float>()(a);
  }
  std::vector<Output> outputs() override {
    if (form_ == Form::dw) return {{"c", &c_}, {"db", &db_}};
    return {{"c", &c_}};
  }
  profiler::Cost cost() const override {
    const int64_t relu_elems = a_.relu_a ? a_.m * a_.k : a_.relu_b ? a_.k * a_.n : 0;
    return costs::linear(a_.m, a_.n, a_.k, relu_elems, a_.bias != nullptr, a_.mask != nullptr,
                         a_.row_sums != nullptr, 4);
  }
  int64_t workspace_bytes(const kernels::KernelEntry& v) const override {
    return naive_tag(v) ? 4 * workspace_elements() : 0;
  }

 private:
  int64_t workspace_elements() const {
    return kernels::linear_workspace(a_.m, a_.n, a_.k, a_.relu_a, a_.relu_b);
  }
  Form form_;
  CaseVector<float> x_, w_, b_, g_, scratch_;
  GuardedBuffer c_, db_;
  kernels::LinearArgs<float> a_;
};

std::unique_ptr<Case> make_linear_case(const std::string& size, uint64_t seed) {
  auto [dims_text, form] = split_suffix(size);
  auto d = parse_dims(kernels::ops::linear.name, kReluLinearSyntax, dims_text, 3, 3);
  LinearCase::Form f = LinearCase::Form::forward;
  if (form == "dx") {
    f = LinearCase::Form::dx;
  } else if (form == "dw") {
    f = LinearCase::Form::dw;
  } else if (!form.empty()) {
    throw Error("lab linear: bad form ':" + form + "' in '" + size + "': expected " +
                kReluLinearSyntax);
  }
  return std::make_unique<LinearCase>(d[0], d[1], d[2], f, seed);
}

void add_linear_op_infos(std::vector<OpInfo>& ops) {
  {
    OpInfo op;
    op.op = kernels::ops::linear.name;
    op.size_syntax = kReluLinearSyntax;
    op.summary = "relu(x) W^T + b and its gradients: ReLU, bias and mask as passes vs in the GEMM";
    // The MLP's middle layer at batch 64: forward, dx, dW; and a wide layer.
    op.default_sizes = {"64x256x256", "64x256x256:dx", "64x256x256:dw", "1024x1024x1024"};
    op.validation_sizes = {"1x1x1",         "7x13x5:dx", "13x7x5:dw",    "33x65x129",
                           "65x257x300:dx", "64x256x10", "64x256x10:dw", "3x2x1:dx"};
    op.tolerance_why =
        "the built-in variants agree to the bit (one loop nest on the same values: "
        "tests/tensor/linear_test.cpp checks it exactly); another kernel may sum the up to 300 "
        "products of an output in another order";
    op.make = &make_linear_case;
    ops.push_back(std::move(op));
  }
}

}  // namespace

const OpInfoFamily kLinearFamily(804, &add_linear_op_infos);

}  // namespace prism::opinfo
