// The descriptions (OpInfos) of the row reductions sum, mean, max and argmax for the lab and the
// op-description tests (the math is in args.h).
//
// Size "RxC": R rows of C columns, each row reduced on its own. ":t" reads the
// input through a transpose (column stride R instead of 1), the layout a reduction over a
// leading dim hands its kernel. argmax also takes ":q" (and ":tq"): inputs on a grid of 8
// values, so a row's maximum repeats and the first occurrence must win.
#include <cstring>
#include <limits>

#include "kernels/opinfo/op_info.h"
#include "kernels/ops/reduce/op.h"

namespace prism::opinfo {
namespace {

using Rows = RowShape;

kernels::ReduceArgs<float> reduce_args(const Rows& r, const float* x, float* out, int64_t* index) {
  return {.x = x,
          .rows = r.rows,
          .cols = r.cols,
          .row_stride = r.row_stride(),
          .col_stride = r.col_stride(),
          .out = out,
          .index = index};
}

class ReduceCase : public Case {
 public:
  ReduceCase(std::string op, const Rows& r, uint64_t seed) : op_(std::move(op)), out_(r.rows) {
    InputRng rng(seed);
    x_ = rng.vector(r.rows * r.cols);
    index_.resize(static_cast<size_t>(r.rows));
    args_ = reduce_args(r, x_.data(), out_.data(), index_.data());
  }
  void run(const kernels::KernelEntry& v) override { v.get<kernels::ReduceArgs, float>()(args_); }
  std::vector<Output> outputs() override { return {{"out", &out_}}; }
  profiler::Cost cost() const override {
    const int64_t in = args_.rows * args_.cols;
    if (op_ == kernels::ops::mean.name) return costs::mean(in, args_.rows, 4);
    // max also writes each row's position (int64), as the front end's max does.
    return costs::reduce(in, args_.rows, 4, op_ == kernels::ops::max.name ? 4 + 8 : 4);
  }

 private:
  std::string op_;
  CaseVector<float> x_;
  CaseVector<int64_t> index_;
  GuardedBuffer out_;
  kernels::ReduceArgs<float> args_;
};

// argmax: the front end (tensor/ops/reduce.cpp) asks for positions only, out = null. The
// kernel writes int64 positions into a GuardedBuffer of two floats per position (the same
// bytes, 8-byte aligned after the 64-float guard), so the guards catch a position written past
// either end; collect() then rewrites them in place as floats for the comparison: the first R
// floats hold the positions, the other R are 0.
constexpr const char* kArgmaxSyntax =
    "RxC (rows x columns), optionally :t (read through a transpose), :q (8 distinct values, so "
    "the maximum repeats) or :tq";
static_assert(GuardedBuffer::kGuard * sizeof(float) % alignof(int64_t) == 0,
              "argmax's int64 positions must be aligned inside a GuardedBuffer");

class ArgmaxCase : public Case {
 public:
  ArgmaxCase(const Rows& r, bool ties, uint64_t seed) : index_(2 * r.rows) {
    InputRng rng(seed);
    x_ = rng.vector(r.rows * r.cols);
    // Ties: round to multiples of 1/4 in [-1, 1), 8 values, so a wide row holds its maximum
    // many times; a variant must return the first, as the naive loop and PyTorch do.
    if (ties) {
      for (float& v : x_) v = static_cast<float>(static_cast<int>((v + 1) * 4)) / 4 - 1;
    }
    args_ = reduce_args(r, x_.data(), nullptr, positions());
  }
  void run(const kernels::KernelEntry& v) override { v.get<kernels::ReduceArgs, float>()(args_); }
  void collect() override {
    // The int64 that a position still holding two fill values reads as: never written. It
    // stays the fill value, so the validation reports it as unwritten.
    int64_t unwritten;
    const float fills[2] = {GuardedBuffer::fill_value(), GuardedBuffer::fill_value()};
    std::memcpy(&unwritten, fills, sizeof unwritten);
    const int64_t rows = args_.rows;
    std::vector<int64_t> at(static_cast<size_t>(rows));  // host only: the kernel never sees it
    std::memcpy(at.data(), index_.data(), at.size() * sizeof(int64_t));
    for (int64_t i = 0; i < rows; ++i) {
      index_.data()[i] =
          at[i] == unwritten ? GuardedBuffer::fill_value() : static_cast<float>(at[i]);
    }
    for (int64_t i = rows; i < 2 * rows; ++i) index_.data()[i] = 0;
  }
  std::vector<Output> outputs() override { return {{"index", &index_}}; }
  profiler::Cost cost() const override {
    // No values, one int64 position per row (the front end's argmax).
    return costs::reduce(args_.rows * args_.cols, args_.rows, 4, 8);
  }

 private:
  int64_t* positions() { return reinterpret_cast<int64_t*>(index_.data()); }

  CaseVector<float> x_;
  GuardedBuffer index_;
  kernels::ReduceArgs<float> args_;
};

OpInfo argmax_op() {
  OpInfo op =
      row_op_info(kernels::ops::argmax.name, "position of each row's max (its first occurrence)");
  op.size_syntax = kArgmaxSyntax;
  op.validation_sizes.insert(op.validation_sizes.end(), {"13x4099:q", "31x17:tq", "64x1000:q"});
  op.tolerance = 1e-9;
  op.tolerance_why =
      "positions are exact: a correct variant returns the same first maximum, and one wrong "
      "position (off by >= 1, every position below C exact in float32) is a normalized error "
      "of at least 1 / C, 1.5e-5 here and >= 6e-8 for any C <= 2^24, so anything above 0 "
      "fails";
  op.make = [](const std::string& size, uint64_t seed) -> std::unique_ptr<Case> {
    auto [dims_text, form] = split_suffix(size);
    auto d = parse_dims(kernels::ops::argmax.name, kArgmaxSyntax, dims_text, 2, 2);
    if (!form.empty() && form != "t" && form != "q" && form != "tq") {
      throw Error("lab argmax: bad form ':" + form + "' in '" + size + "': expected " +
                  kArgmaxSyntax);
    }
    const Rows r{d[0], d[1], form.find('t') != std::string::npos};
    return std::make_unique<ArgmaxCase>(r, form.find('q') != std::string::npos, seed);
  };
  return op;
}

OpInfo reduce_op(const char* name, const char* summary) {
  OpInfo op = row_op_info(name, summary);
  op.tolerance = 1e-5;
  op.tolerance_why =
      "a row's sum in 32 lanes (optimized) or Eigen's tree order differs from the naive running "
      "sum by a few float32 roundings";
  const std::string op_name = name;
  op.make = [op_name](const std::string& size, uint64_t seed) -> std::unique_ptr<Case> {
    return std::make_unique<ReduceCase>(op_name, parse_row_shape(op_name, kRowSyntaxT, size), seed);
  };
  return op;
}

void add_reduce_op_infos(std::vector<OpInfo>& ops) {
  ops.push_back(reduce_op(kernels::ops::sum.name, "sum of each row"));
  ops.push_back(reduce_op(kernels::ops::mean.name, "mean of each row"));
  ops.push_back(reduce_op(kernels::ops::max.name, "max of each row (and its position)"));
  ops.push_back(argmax_op());
}

}  // namespace

const OpInfoFamily kReduceFamily(300, &add_reduce_op_infos);

}  // namespace prism::opinfo
