// Lab adapters for row-wise ops: reductions (sum, mean, max) and softmax / log_softmax.
//
// Size "RxC": R rows of C columns, each row reduced or normalized on its own. ":t" reads the
// input through a transpose (column stride R instead of 1), the layout a reduction over a
// leading dim hands its kernel.
#include "kernels/costs.h"
#include "kernels/lab/lab_ops_list.h"

namespace prism::lab {
namespace {

constexpr const char* kSyntax = "RxC (rows x columns), optionally :t (read through a transpose)";

struct Rows {
  int64_t rows, cols;
  bool transposed;
  int64_t row_stride() const { return transposed ? 1 : cols; }
  int64_t col_stride() const { return transposed ? rows : 1; }
};

Rows parse_rows(const std::string& op, const std::string& size) {
  auto [dims_text, form] = split_suffix(size);
  auto d = parse_dims(op, kSyntax, dims_text, 2, 2);
  if (!form.empty() && form != "t") {
    throw Error("lab " + op + ": bad form ':" + form + "' in '" + size + "': expected " + kSyntax);
  }
  return {d[0], d[1], form == "t"};
}

class ReduceCase : public Case {
 public:
  ReduceCase(std::string op, const Rows& r, uint64_t seed) : op_(std::move(op)), out_(r.rows) {
    InputRng rng(seed);
    x_ = rng.vector(r.rows * r.cols);
    index_.resize(static_cast<size_t>(r.rows));
    args_ = {};
    args_.x = x_.data();
    args_.outer = r.rows;
    args_.inner = r.cols;
    args_.outer_stride = r.row_stride();
    args_.inner_stride = r.col_stride();
    args_.out = out_.data();
    args_.index = index_.data();
  }
  void run(const kernels::KernelEntry& v) override { v.get<kernels::ReduceArgs, float>()(args_); }
  std::vector<Output> outputs() override { return {{"out", &out_}}; }
  profiler::Cost cost() const override {
    const int64_t in = args_.outer * args_.inner;
    if (op_ == "mean") return costs::mean(in, args_.outer, 4);
    // max also writes each row's position (int64), as the front end's max does.
    return costs::reduce(in, args_.outer, 4, op_ == "max" ? 4 + 8 : 4);
  }

 private:
  std::string op_;
  LabVector<float> x_;
  LabVector<int64_t> index_;
  GuardedBuffer out_;
  kernels::ReduceArgs<float> args_;
};

class SoftmaxCase : public Case {
 public:
  SoftmaxCase(const Rows& r, uint64_t seed) : out_(r.rows * r.cols) {
    InputRng rng(seed);
    // Logits of a realistic spread; a few large ones test the max subtraction.
    x_ = rng.vector(r.rows * r.cols, -8, 8);
    if (!x_.empty()) x_[0] = 80;  // exp(80) overflows float32: a kernel must subtract the max
    args_ = {};
    args_.x = x_.data();
    args_.out = out_.data();
    args_.rows = r.rows;
    args_.cols = r.cols;
    args_.row_stride = r.row_stride();
    args_.col_stride = r.col_stride();
  }
  void run(const kernels::KernelEntry& v) override { v.get<kernels::SoftmaxArgs, float>()(args_); }
  std::vector<Output> outputs() override { return {{"out", &out_}}; }
  profiler::Cost cost() const override { return costs::softmax(args_.rows * args_.cols, 4); }

 private:
  LabVector<float> x_;
  GuardedBuffer out_;
  kernels::SoftmaxArgs<float> args_;
};

LabOp rows_op(const char* name, const char* summary, bool softmax) {
  LabOp op;
  op.op = name;
  op.size_syntax = kSyntax;
  op.summary = summary;
  op.default_sizes = {"128x10", "4096x1024", "1024x4096:t"};
  op.validation_sizes = {"1x1", "1x7", "7x1", "13x4099", "31x17:t", "5x1:t", "3x65536"};
  op.tolerance = 1e-5;
  const std::string op_name = name;
  op.make = [softmax, op_name](const std::string& size, uint64_t seed) -> std::unique_ptr<Case> {
    const Rows r = parse_rows(op_name, size);
    if (softmax) return std::make_unique<SoftmaxCase>(r, seed);
    return std::make_unique<ReduceCase>(op_name, r, seed);
  };
  return op;
}

}  // namespace

void add_reduce_lab_ops(std::vector<LabOp>& ops) {
  ops.push_back(rows_op("sum", "sum of each row", false));
  ops.push_back(rows_op("mean", "mean of each row", false));
  ops.push_back(rows_op("max", "max of each row (and its position)", false));
}

void add_softmax_lab_ops(std::vector<LabOp>& ops) {
  ops.push_back(rows_op("softmax", "softmax of each row (three passes vs online)", true));
  ops.push_back(rows_op("log_softmax", "log_softmax of each row", true));
}

}  // namespace prism::lab
