// The descriptions of rope and rope_backward for the lab and the op-description tests (the math
// is in op.h).
//
// Size "TxD", "NxTxD" or "BxHxTxD": rows of D (even) at positions 0 .. T-1, for N (or B x H)
// heads. Suffixes: ":qkv" (four dims only) reads x as a head's q inside a fused [B, T, 3, H, D]
// projection, the strided view a GPT block hands the op; ":p" starts at position 1000, a step
// deep into a decode, where the angles are large.
#include <string>

#include "kernels/opinfo/op_info.h"
#include "kernels/ops/rope/op.h"

namespace prism::opinfo {
namespace {

constexpr const char* kSyntax =
    "TxD, NxTxD or BxHxTxD (D even), optionally :qkv (four dims: q inside a fused qkv buffer) "
    "and :p (positions from 1000)";

struct RopeShape {
  int64_t outer0 = 1, outer1 = 1, t = 0, d = 0;
  bool qkv = false;
  int64_t pos0 = 0;
};

RopeShape parse_rope_shape(const std::string& op, const std::string& size) {
  const auto [dims_text, form] = split_suffix(size);
  const std::vector<int64_t> v = parse_dims(op, kSyntax, dims_text, 2, 4);
  RopeShape s;
  s.t = v[v.size() - 2], s.d = v.back();
  if (v.size() == 4) s.outer0 = v[0], s.outer1 = v[1];
  if (v.size() == 3) s.outer1 = v[0];
  if (s.d % 2 != 0) {
    throw Error(op + ": size '" + size + "': D = " + std::to_string(s.d) +
                " is odd; rope turns pairs of entries, so D must be even");
  }
  if (form != "" && form != "qkv" && form != "p" && form != "qkvp") {
    throw Error(op + ": size '" + size + "': unknown suffix ':" + form + "' (" + kSyntax + ")");
  }
  s.qkv = form.find("qkv") != std::string::npos;
  if (form.find('p') != std::string::npos) s.pos0 = 1000;
  if (s.qkv && v.size() != 4) {
    throw Error(op + ": size '" + size + "': :qkv needs four dims, BxHxTxD");
  }
  return s;
}

class RopeCase : public Case {
 public:
  RopeCase(const RopeShape& s, uint64_t seed) : y_(s.outer0 * s.outer1 * s.t * s.d) {
    InputRng rng(seed);
    const int64_t heads = s.outer1, row = s.d;
    // The qkv layout holds q, k and v of every head at each position: 3 H D floats a position.
    const int64_t pos_stride = s.qkv ? 3 * heads * row : row;
    x_ = rng.vector(s.qkv ? s.outer0 * s.t * pos_stride : s.outer0 * s.outer1 * s.t * row, -2, 2);
    a_ = {};
    a_.x = x_.data(), a_.y = y_.data();
    a_.outer0 = s.outer0, a_.outer1 = s.outer1, a_.t = s.t, a_.d = s.d;
    a_.x_st = pos_stride;
    a_.x_s1 = s.qkv ? row : s.t * row;
    a_.x_s0 = s.qkv ? s.t * pos_stride : s.outer1 * s.t * row;
    a_.pos0 = s.pos0;
    a_.base = 10000;
  }
  void run(const kernels::KernelEntry& v) override { v.get<kernels::RopeArgs, float>()(a_); }
  std::vector<Output> outputs() override { return {{"y", &y_}}; }
  profiler::Cost cost() const override {
    return costs::rope(a_.outer0 * a_.outer1 * a_.t * a_.d, 4);
  }

 private:
  CaseVector<float> x_;
  GuardedBuffer y_;
  kernels::RopeArgs<float> a_;
};

void add_rope_op_infos(std::vector<OpInfo>& ops) {
  for (bool backward : {false, true}) {
    OpInfo op;
    op.op = backward ? kernels::ops::rope_backward.name : kernels::ops::rope.name;
    op.size_syntax = kSyntax;
    op.summary = backward ? "gradient of rope: each pair of dy turned back by its angle"
                          : "rotary position embedding: each pair of a head's q or k turned by "
                            "its position's angle";
    // GPT-2 small's q in a training step (B 4, T 64) and at its full context, and many short
    // heads.
    op.default_sizes = {"4x12x64x64:qkv", "1x12x1024x64:qkv", "32x4x128x32"};
    op.validation_sizes = {"1x2",       "7x2",           "3x13x6",         "5x31x130:p",
                           "1x1x1x2:p", "2x3x17x64:qkv", "1x12x37x64:qkvp"};
    op.tolerance = 1e-6;
    op.tolerance_why =
        "the angles are computed in double by every variant; the optimized one rounds each "
        "cosine and sine to float32 in its table and multiplies in float32, a few units in the "
        "last place of |y| <= sqrt(2) max|x|";
    const std::string name = op.op;
    op.make = [name](const std::string& size, uint64_t seed) -> std::unique_ptr<Case> {
      return std::make_unique<RopeCase>(parse_rope_shape(name, size), seed);
    };
    ops.push_back(std::move(op));
  }
}

}  // namespace

const OpInfoFamily kRopeFamily(870, &add_rope_op_infos);

}  // namespace prism::opinfo
