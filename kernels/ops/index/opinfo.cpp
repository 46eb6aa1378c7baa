// The descriptions (OpInfos) of the index ops for the lab and the op-description tests: gather /
// scatter_add (torch.gather and its gradient) and index_select / index_add (row lookup, as in an
// embedding, and its gradient).
//
// gather / scatter_add "RxCxK": x (gather's source, scatter_add's destination) is R x C and the
// index R x K picks along dim 1 (values in [0, C)); ":d0" picks along dim 0 instead, with an
// index of K x C (values in [0, R)); ":t" reads the index, and gather's source, through a
// transpose (scatter_add's destination and source are contiguous, as the front end makes them).
// index_select / index_add "NxIxK" or "OxNxIxK": a table of N rows of I elements (O of them),
// K indices in [0, N): an embedding lookup and its gradient.
//
// Every index is valid. scatter_add and index_add accumulate into a destination that the
// front end zeroes, so a validation run zeroes it too instead of poisoning it: an element no
// index hits stays 0, legitimately, and an element a kernel forgets to add into shows as a
// wrong sum.
#include <cstring>

#include "kernels/opinfo/op_info.h"
#include "kernels/ops/index/op.h"

namespace prism::opinfo {
namespace {

// Random positions in [0, n).
CaseVector<int64_t> random_indices(InputRng& rng, int64_t count, int64_t n) {
  CaseVector<int64_t> v(static_cast<size_t>(count));
  for (auto& i : v) i = static_cast<int64_t>(rng.next_u64() % static_cast<uint64_t>(n));
  return v;
}

// ---- gather / scatter_add ----------------------------------------------------------------------
constexpr const char* kGatherSyntax =
    "RxCxK (x is R x C, an R x K index along dim 1), optionally :d0 (a K x C index along dim "
    "0), :t (the index, and gather's source, read through a transpose) or :d0t";

class GatherCase : public Case {
 public:
  GatherCase(bool scatter, int64_t rows, int64_t cols, int64_t k, int dim, bool transposed,
             uint64_t seed)
      : scatter_(scatter) {
    // The index's shape: K positions per row along dim 1, or K rows of positions along dim 0.
    const int64_t ir = dim == 1 ? rows : k, ic = dim == 1 ? k : cols;
    const int64_t dim_size = dim == 1 ? cols : rows;
    InputRng rng(seed);
    x_ = rng.vector(scatter ? ir * ic : rows * cols);
    index_ = random_indices(rng, ir * ic, dim_size);
    out_ = GuardedBuffer(scatter ? rows * cols : ir * ic);
    a_ = {};
    a_.x = x_.data();
    a_.index = index_.data();
    a_.out = out_.data();
    a_.ndim = 2;
    a_.dim = dim;
    a_.shape[0] = ir, a_.shape[1] = ic;
    // A transposed index is stored [ic, ir]; so is gather's source, [cols, rows].
    a_.index_stride[0] = transposed ? 1 : ic, a_.index_stride[1] = transposed ? ir : 1;
    const bool x_transposed = transposed && !scatter;
    a_.x_stride[0] = x_transposed ? 1 : cols, a_.x_stride[1] = x_transposed ? rows : 1;
    a_.dim_size = dim_size;
  }
  void run(const kernels::KernelEntry& v) override { v.get<kernels::GatherArgs, float>()(a_); }
  void prepare_validation() override {
    if (scatter_) {
      out_.fill(0);  // the front end's zeros()
    } else {
      out_.poison();
    }
  }
  std::vector<Output> outputs() override { return {{scatter_ ? "x_grad" : "out", &out_}}; }
  profiler::Cost cost() const override {
    const auto n = static_cast<int64_t>(index_.size());
    return scatter_ ? costs::scatter_add(n, n, 4) : costs::gather(n, n, 4);
  }

 private:
  bool scatter_;
  CaseVector<float> x_;
  CaseVector<int64_t> index_;
  GuardedBuffer out_;
  kernels::GatherArgs<float> a_;
};

// ---- index_select / index_add ------------------------------------------------------------------
constexpr const char* kIndexSelectSyntax =
    "NxIxK (N rows of I elements, K indices) or OxNxIxK (O such tables)";

class IndexSelectCase : public Case {
 public:
  IndexSelectCase(bool add, const std::vector<int64_t>& d, uint64_t seed) : add_(add) {
    const bool outer = d.size() == 4;
    a_ = {};
    a_.outer = outer ? d[0] : 1;
    a_.n = d[outer ? 1 : 0];
    a_.inner = d[outer ? 2 : 1];
    a_.count = d[outer ? 3 : 2];
    a_.dim = outer ? 1 : 0;
    const int64_t table = a_.outer * a_.n * a_.inner, picked = a_.outer * a_.count * a_.inner;
    InputRng rng(seed);
    // index_select reads the table and writes the picked rows; index_add the reverse.
    x_ = rng.vector(add ? picked : table);
    index_ = random_indices(rng, a_.count, a_.n);
    out_ = GuardedBuffer(add ? table : picked);
    a_.x = x_.data();
    a_.index = index_.data();
    a_.out = out_.data();
  }
  void run(const kernels::KernelEntry& v) override { v.get<kernels::IndexSelectArgs, float>()(a_); }
  void prepare_validation() override {
    if (add_) {
      out_.fill(0);  // the front end's zeros()
    } else {
      out_.poison();
    }
  }
  std::vector<Output> outputs() override { return {{add_ ? "x_grad" : "out", &out_}}; }
  profiler::Cost cost() const override {
    const int64_t picked = a_.outer * a_.count * a_.inner;
    return add_ ? costs::scatter_add(a_.count, picked, 4) : costs::gather(a_.count, picked, 4);
  }

 private:
  bool add_;
  CaseVector<float> x_;
  CaseVector<int64_t> index_;
  GuardedBuffer out_;
  kernels::IndexSelectArgs<float> a_;
};

constexpr double kExact = 1e-9;
constexpr const char* kExactWhy =
    "no arithmetic, so every element must be bit-exact: inputs are multiples of 2^-23 in "
    "[-1, 1), so one misplaced element is a normalized error of at least 1.2e-7";
constexpr double kAccumulate = 1e-6;
constexpr const char* kAccumulateWhy =
    "the built-in variants add each destination's terms in the CPU's order and agree bit for "
    "bit; a variant with atomics adds them in another order, a few float32 roundings of sums "
    "of up to a few dozen terms here (every order reversed: at most 2.4e-7)";

OpInfo gather_op(bool scatter) {
  OpInfo op;
  op.op = scatter ? "scatter_add" : "gather";
  op.size_syntax = kGatherSyntax;
  op.summary = scatter ? "x_grad[.., index, ..] += src: gather's gradient"
                       : "out = x[.., index, ..] along one dim (torch.gather)";
  op.default_sizes = {"4096x1000x1", "1024x4096x1024", "1024x4096x1024:t"};
  op.validation_sizes = {"1x1x1",       "7x13x5",      "13x7x29",   "31x17x11:t",
                         "29x37x13:d0", "17x5x23:d0t", "64x1000x1", "257x1031x64"};
  op.tolerance = scatter ? kAccumulate : kExact;
  op.tolerance_why = scatter ? kAccumulateWhy : kExactWhy;
  const std::string name = op.op;
  op.make = [scatter, name](const std::string& size, uint64_t seed) -> std::unique_ptr<Case> {
    auto [dims_text, form] = split_suffix(size);
    auto d = parse_dims(name, kGatherSyntax, dims_text, 3, 3);
    if (!form.empty() && form != "t" && form != "d0" && form != "d0t") {
      throw Error("lab " + name + ": bad form ':" + form + "' in '" + size + "': expected " +
                  kGatherSyntax);
    }
    const int dim = form.rfind("d0", 0) == 0 ? 0 : 1;
    const bool transposed = !form.empty() && form.back() == 't';
    return std::make_unique<GatherCase>(scatter, d[0], d[1], d[2], dim, transposed, seed);
  };
  return op;
}

OpInfo index_select_op(bool add) {
  OpInfo op;
  op.op = add ? "index_add" : "index_select";
  op.size_syntax = kIndexSelectSyntax;
  op.summary = add ? "x_grad[index[j]] += rows: index_select's (an embedding's) gradient"
                   : "rows x[index[j]] (an embedding lookup)";
  // GPT-2's token embedding for 1024 tokens, a small vocabulary (many repeats), an inner dim.
  op.default_sizes = {"50257x768x1024", "1000x128x8192", "64x512x16x512"};
  op.validation_sizes = {"1x1x1",   "7x13x5",      "13x1x29",     "5x37x3x17",
                         "3x1x7x2", "1031x64x257", "50257x16x129"};
  op.tolerance = add ? kAccumulate : kExact;
  op.tolerance_why = add ? kAccumulateWhy : kExactWhy;
  const std::string name = op.op;
  op.make = [add, name](const std::string& size, uint64_t seed) -> std::unique_ptr<Case> {
    return std::make_unique<IndexSelectCase>(add, parse_dims(name, kIndexSelectSyntax, size, 3, 4),
                                             seed);
  };
  return op;
}

}  // namespace

static void add_index_op_infos(std::vector<OpInfo>& ops) {
  ops.push_back(gather_op(false));
  ops.push_back(gather_op(true));
  ops.push_back(index_select_op(false));
  ops.push_back(index_select_op(true));
}

const OpInfoFamily kIndexFamily(250, &add_index_op_infos);

}  // namespace prism::opinfo
