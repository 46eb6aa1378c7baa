// The descriptions (OpInfos) of elementwise ops: unary (relu, gelu, exp, ...) and binary
// (add, mul, ...).
//
// Size "N" is a contiguous vector of N elements. "RxC" is an R x C matrix; with ":t" the
// input is read through its transpose (a strided walk, what a kernel meets after a
// permute), and for binary ops ":row" broadcasts b as a [1, C] row over the R rows.
// Cost: the op's FLOPs per element (as its registry entry states) times the elements;
// bytes = inputs read once + output written once.
#include "kernels/costs.h"
#include "kernels/opinfo/op_info.h"
#include "kernels/ops/elementwise/op.h"

namespace prism::opinfo {
namespace {

struct ElementwiseSpec {
  const char* op;
  float low, high;  // input range (a's for a binary op): log and sqrt need positive inputs
  bool binary;
  // b's range where it must differ from a's: div's divisor away from 0, pow's exponent, the
  // upstream gradient of sigmoid_backward and tanh_backward (whose a is the forward's output).
  // Equal bounds, the default, mean "a's range".
  float b_low = 0, b_high = 0;
};

constexpr ElementwiseSpec kSpecs[] = {
    {"relu", -1, 1, false},
    {"gelu", -3, 3, false},
    {"exp", -4, 4, false},
    {"tanh", -3, 3, false},
    {"sigmoid", -4, 4, false},
    {"silu", -6, 6, false},  // both of sigmoid's branches and its saturated ends
    {"log", 0.1f, 4, false},
    {"neg", -1, 1, false},
    {"sqrt", 0.01f, 4, false},
    {"add", -1, 1, true},
    {"sub", -1, 1, true},
    {"mul", -1, 1, true},
    {"div", -1, 1, true, 0.5f, 2},  // a divisor in [0.5, 2), away from 0
    {"pow", 0.5f, 2, true, -3, 3},  // a positive base; results in [1/8, 8]
    {"relu_backward", -1, 1, true},
    {"gelu_backward", -3, 3, true},
    {"silu_backward", -6, 6, true, -1, 1},    // a = the forward's input x, b = g
    {"sigmoid_backward", 0, 1, true, -1, 1},  // a = sigmoid's output y in [0, 1), b = g
    {"tanh_backward", -1, 1, true},           // a = tanh's output y in [-1, 1), b = g
};

struct Shape2 {
  int64_t rows = 1, cols = 1;
  bool transposed = false, row_broadcast = false;
};

Shape2 parse_shape(const ElementwiseSpec& s, const std::string& size, const char* syntax) {
  auto [dims_text, form] = split_suffix(size);
  auto d = parse_dims(s.op, syntax, dims_text, 1, 2);
  Shape2 sh;
  if (d.size() == 1) {
    sh.cols = d[0];
  } else {
    sh.rows = d[0];
    sh.cols = d[1];
  }
  if (form == "t" && d.size() == 2)
    sh.transposed = true;
  else if (form == "row" && d.size() == 2 && s.binary)
    sh.row_broadcast = true;
  else if (!form.empty()) {
    throw Error(std::string("lab ") + s.op + ": bad form ':" + form + "' in '" + size +
                "': expected " + syntax);
  }
  return sh;
}

class UnaryCase : public Case {
 public:
  UnaryCase(const ElementwiseSpec& s, const Shape2& sh, uint64_t seed)
      : flops_(costs::elementwise_steps(s.op)), out_(sh.rows * sh.cols) {
    InputRng rng(seed);
    x_ = rng.vector(sh.rows * sh.cols, s.low, s.high);
    args_ = {};
    args_.x = x_.data();
    args_.out = out_.data();
    args_.numel = sh.rows * sh.cols;
    if (sh.transposed) {
      // out[i, j] = f(x[j, i]) with x stored [cols, rows]: a strided 2-d walk.
      args_.layout.ndim = 2;
      args_.layout.shape[0] = sh.rows;
      args_.layout.shape[1] = sh.cols;
      args_.layout.stride[0] = 1;
      args_.layout.stride[1] = sh.rows;
    } else {
      args_.layout.ndim = 1;
      args_.layout.shape[0] = args_.numel;
      args_.layout.stride[0] = 1;
    }
  }
  void run(const kernels::KernelEntry& v) override { v.get<kernels::UnaryArgs, float>()(args_); }
  std::vector<Output> outputs() override { return {{"out", &out_}}; }
  profiler::Cost cost() const override {
    return costs::elementwise({args_.numel}, flops_, 4 * args_.numel, 4);
  }

 private:
  int64_t flops_;
  CaseVector<float> x_;
  GuardedBuffer out_;
  kernels::UnaryArgs<float> args_;
};

class BinaryCase : public Case {
 public:
  BinaryCase(const ElementwiseSpec& s, const Shape2& sh, uint64_t seed)
      : flops_(costs::elementwise_steps(s.op)), out_(sh.rows * sh.cols) {
    InputRng rng(seed);
    const int64_t n = sh.rows * sh.cols;
    a_ = rng.vector(n, s.low, s.high);
    const bool own_b = s.b_low != s.b_high;
    b_ = rng.vector(sh.row_broadcast ? sh.cols : n, own_b ? s.b_low : s.low,
                    own_b ? s.b_high : s.high);
    args_ = {};
    args_.a = a_.data();
    args_.b = b_.data();
    args_.out = out_.data();
    args_.numel = n;
    args_.ndim = 2;
    args_.shape[0] = sh.rows;
    args_.shape[1] = sh.cols;
    args_.a_stride[0] = sh.transposed ? 1 : sh.cols;
    args_.a_stride[1] = sh.transposed ? sh.rows : 1;
    args_.b_stride[0] = sh.row_broadcast ? 0 : sh.cols;
    args_.b_stride[1] = 1;
  }
  void run(const kernels::KernelEntry& v) override { v.get<kernels::BinaryArgs, float>()(args_); }
  std::vector<Output> outputs() override { return {{"out", &out_}}; }
  profiler::Cost cost() const override {
    const int64_t in_bytes = 4 * static_cast<int64_t>(a_.size() + b_.size());
    return costs::elementwise({args_.numel}, flops_, in_bytes, 4);
  }

 private:
  int64_t flops_;
  CaseVector<float> a_, b_;
  GuardedBuffer out_;
  kernels::BinaryArgs<float> args_;
};

}  // namespace

static void add_elementwise_op_infos(std::vector<OpInfo>& ops) {
  for (const ElementwiseSpec& s : kSpecs) {
    OpInfo op;
    op.op = s.op;
    op.size_syntax = s.binary ? "N or RxC, optionally :t (a transposed) or :row (b broadcast)"
                              : "N or RxC, optionally :t (read through a transpose)";
    op.summary = s.binary ? "elementwise, two inputs with broadcasting" : "elementwise, one input";
    op.default_sizes = {"4096", "1048576", "1024x1024:t"};
    if (s.binary) op.default_sizes.push_back("1024x1024:row");
    op.validation_sizes = {"1", "7", "4099", "13x17:t", "1x31", "31x1:t"};
    if (s.binary) op.validation_sizes.push_back("29x37:row");
    op.tolerance = 1e-5;
    op.tolerance_why =
        "one element at a time, but a variant may use a vectorised exp / tanh / pow accurate "
        "to a few float32 ulps instead of libm's (a GPU's are within 2), or fuse a multiply "
        "and an add (1 - y * y)";
    const std::string syntax = op.size_syntax;
    op.make = [s, syntax](const std::string& size, uint64_t seed) -> std::unique_ptr<Case> {
      const Shape2 sh = parse_shape(s, size, syntax.c_str());
      if (s.binary) return std::make_unique<BinaryCase>(s, sh, seed);
      return std::make_unique<UnaryCase>(s, sh, seed);
    };
    ops.push_back(std::move(op));
  }
}

const OpInfoFamily kElementwiseFamily(200, &add_elementwise_op_infos);

}  // namespace prism::opinfo
