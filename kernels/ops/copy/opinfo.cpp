// The description (OpInfo) of copy for the lab and the op-description tests.
//
// Size "RxC": an R x C copy; ":t" reads the source through a transpose (what contiguous() of a
// transposed view runs), ":cat" writes into the right half of an R x 2C buffer (what concat
// runs for its second input). Dims that are contiguous on both sides are merged first, as the
// front end (tensor/layout.h) does, so a plain copy arrives as one run.
#include "kernels/opinfo/op_info.h"
#include "kernels/ops/copy/op.h"

namespace prism::opinfo {
namespace {

// ---- copy --------------------------------------------------------------------------------------
constexpr const char* kCopySyntax =
    "RxC, optionally :t (source read through a transpose) or :cat (destination is the right "
    "half of an R x 2C buffer)";

// The front end's dim merging (tensor/layout.cpp, merge_dims_copy): size-1 dims dropped, and a
// dim folded into the one before it when both sides' strides allow.
int merge_copy_dims(const int64_t* shape, const int64_t* ss, const int64_t* ds, int ndim,
                    kernels::CopyArgs<float>& a) {
  int n = 0;
  int64_t numel = 1;
  for (int d = 0; d < ndim; ++d) {
    numel *= shape[d];
    if (shape[d] == 1) continue;
    if (n > 0 && a.src_stride[n - 1] == ss[d] * shape[d] &&
        a.dst_stride[n - 1] == ds[d] * shape[d]) {
      a.shape[n - 1] *= shape[d];
      a.src_stride[n - 1] = ss[d];
      a.dst_stride[n - 1] = ds[d];
    } else {
      a.shape[n] = shape[d], a.src_stride[n] = ss[d], a.dst_stride[n] = ds[d];
      ++n;
    }
  }
  if (n == 0) {  // all ones: one element
    a.shape[0] = numel, a.src_stride[0] = 1, a.dst_stride[0] = 1;
    n = 1;
  }
  return n;
}

class CopyCase : public Case {
 public:
  CopyCase(int64_t rows, int64_t cols, bool transposed, bool cat, uint64_t seed)
      : cols_(cols), cat_(cat), dst_(rows * cols * (cat ? 2 : 1)) {
    InputRng rng(seed);
    src_ = rng.vector(rows * cols);
    const int64_t shape[2] = {rows, cols};
    // A transposed source is stored [cols, rows]; a concat window has row stride 2C.
    const int64_t ss[2] = {transposed ? 1 : cols, transposed ? rows : 1};
    const int64_t ds[2] = {cat ? 2 * cols : cols, 1};
    a_ = {};
    a_.src = src_.data();
    a_.dst = dst_.data() + (cat ? cols : 0);
    a_.ndim = merge_copy_dims(shape, ss, ds, 2, a_);
  }
  void run(const kernels::KernelEntry& v) override { v.get<kernels::CopyArgs, float>()(a_); }
  void prepare_validation() override {
    dst_.poison();
    if (!cat_) return;
    // The left halves belong to concat's first input: 0 here, so a kernel that writes there
    // changes them, and the comparison sees it.
    for (int64_t i = 0; i < dst_.size(); i += 2 * cols_) {
      std::memset(dst_.data() + i, 0, static_cast<size_t>(cols_) * sizeof(float));
    }
  }
  std::vector<Output> outputs() override { return {{"dst", &dst_}}; }
  profiler::Cost cost() const override { return costs::copy(static_cast<int64_t>(src_.size()), 4); }

 private:
  int64_t cols_;
  bool cat_;
  CaseVector<float> src_;
  GuardedBuffer dst_;
  kernels::CopyArgs<float> a_;
};

constexpr double kExact = 1e-9;
constexpr const char* kExactWhy =
    "no arithmetic, so every element must be bit-exact: inputs are multiples of 2^-23 in "
    "[-1, 1), so one misplaced element is a normalized error of at least 1.2e-7";

OpInfo copy_op() {
  OpInfo op;
  op.op = kernels::ops::copy.name;
  op.size_syntax = kCopySyntax;
  op.summary = "strided copy: contiguous() of a view, concat";
  op.default_sizes = {"4096x1024", "4096x1024:t", "4096x1024:cat"};
  op.validation_sizes = {"1x1",     "7x13",    "1x31:t",    "31x1:t",     "13x4099:t",
                         "31x17:t", "1x7:cat", "29x37:cat", "1027x1031:t"};
  op.tolerance = kExact;
  op.tolerance_why = kExactWhy;
  op.make = [](const std::string& size, uint64_t seed) -> std::unique_ptr<Case> {
    auto [dims_text, form] = split_suffix(size);
    auto d = parse_dims(kernels::ops::copy.name, kCopySyntax, dims_text, 2, 2);
    if (!form.empty() && form != "t" && form != "cat") {
      throw Error("lab copy: bad form ':" + form + "' in '" + size + "': expected " + kCopySyntax);
    }
    return std::make_unique<CopyCase>(d[0], d[1], form == "t", form == "cat", seed);
  };
  return op;
}

void add_copy_op_infos(std::vector<OpInfo>& ops) {
  ops.push_back(copy_op());
}

}  // namespace

const OpInfoFamily kCopyFamily(240, &add_copy_op_infos);  // 240: before the index ops

}  // namespace prism::opinfo
