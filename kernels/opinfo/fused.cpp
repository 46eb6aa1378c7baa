// The descriptions (OpInfos) of the fused ops and their unfused counterparts: layer_norm,
// cross_entropy, attention (forward and backward), linear_gelu and linear.
//
// Each variant gets the scratch the tensor front end would give it (kernels/args.h): the
// unfused (naive-tagged) variants their full-size temporaries, tiled attention its per-thread
// tiles, so the lab times exactly what a training step runs and reports the extra memory.
// Costs come from the same formulas the ops' front ends use (kernels/costs.h).
#include <omp.h>

#include <cmath>

#include "kernels/costs.h"
#include "kernels/opinfo/op_info.h"
#include "kernels/ops/attention/op.h"
#include "kernels/ops/cross_entropy/op.h"
#include "kernels/ops/layer_norm/op.h"
#include "kernels/ops/linear/op.h"
#include "kernels/ops/linear_gelu/op.h"

namespace prism::opinfo {
namespace {

bool naive_tag(const kernels::KernelEntry& v) {
  return v.tag == kernels::VariantTag::naive;
}

// ---- layer_norm --------------------------------------------------------------------------------
constexpr const char* kRowsSyntax = "RxC (rows x features)";

class LayerNormCase : public Case {
 public:
  LayerNormCase(int64_t rows, int64_t cols, uint64_t seed)
      : out_(rows * cols), mean_(rows), rstd_(rows) {
    InputRng rng(seed);
    // An offset far from zero: the naive E[x^2] - E[x]^2 formula would cancel here.
    x_ = rng.vector(rows * cols, 99, 101);
    w_ = rng.vector(cols, 0.5f, 1.5f);
    b_ = rng.vector(cols);
    a_ = {};
    a_.x = x_.data(), a_.weight = w_.data(), a_.bias = b_.data();
    a_.out = out_.data(), a_.mean = mean_.data(), a_.rstd = rstd_.data();
    a_.rows = rows, a_.cols = cols, a_.row_stride = cols, a_.col_stride = 1;
    a_.eps = 1e-5;
  }
  void run(const kernels::KernelEntry& v) override { v.get<kernels::LayerNormArgs, float>()(a_); }
  std::vector<Output> outputs() override {
    return {{"out", &out_}, {"mean", &mean_}, {"rstd", &rstd_}};
  }
  profiler::Cost cost() const override {
    return costs::layer_norm(a_.rows, a_.cols, true, true, true, 4);
  }

 private:
  CaseVector<float> x_, w_, b_;
  GuardedBuffer out_, mean_, rstd_;
  kernels::LayerNormArgs<float> a_;
};

// ---- cross_entropy -----------------------------------------------------------------------------
class CrossEntropyCase : public Case {
 public:
  CrossEntropyCase(int64_t rows, int64_t cols, uint64_t seed)
      : workspace_(static_cast<size_t>(rows * cols)), lse_(static_cast<size_t>(rows)), loss_(1) {
    InputRng rng(seed);
    logits_ = rng.vector(rows * cols, -6, 6);
    target_.resize(static_cast<size_t>(rows));
    for (auto& t : target_) t = static_cast<int64_t>(rng.next_u64() % static_cast<uint64_t>(cols));
    a_ = {};
    a_.logits = logits_.data(), a_.target = target_.data(), a_.loss = loss_.data();
    a_.lse = lse_.data();
    a_.rows = rows, a_.cols = cols, a_.row_stride = cols, a_.col_stride = 1, a_.target_stride = 1;
    a_.scale = 1.0 / static_cast<double>(rows);
  }
  void run(const kernels::KernelEntry& v) override {
    kernels::CrossEntropyArgs<float> a = a_;
    if (naive_tag(v)) {
      a.workspace = workspace_.data();
      a.workspace_size = static_cast<int64_t>(workspace_.size());
    }
    v.get<kernels::CrossEntropyArgs, float>()(a);
  }
  std::vector<Output> outputs() override { return {{"loss", &loss_}}; }
  profiler::Cost cost() const override { return costs::cross_entropy(a_.rows, a_.cols, true, 4); }
  int64_t workspace_bytes(const kernels::KernelEntry& v) const override {
    return naive_tag(v) ? 4 * static_cast<int64_t>(workspace_.size()) : 0;
  }

 private:
  CaseVector<float> logits_, workspace_;
  CaseVector<int64_t> target_;
  CaseVector<double> lse_;
  GuardedBuffer loss_;
  kernels::CrossEntropyArgs<float> a_;
};

// ---- attention ---------------------------------------------------------------------------------
constexpr const char* kAttentionSyntax =
    "BxHxLxD (batch, heads, sequence length, head size), optionally :causal";

struct AttentionShape {
  int64_t b, h, l, d;
  bool causal;
};

AttentionShape parse_attention(const std::string& op, const std::string& size) {
  auto [dims_text, form] = split_suffix(size);
  auto v = parse_dims(op, kAttentionSyntax, dims_text, 4, 4);
  if (!form.empty() && form != "causal") {
    throw Error("lab " + op + ": bad form ':" + form + "' in '" + size + "': expected " +
                kAttentionSyntax);
  }
  return {v[0], v[1], v[2], v[3], form == "causal"};
}

// The scratch the front end gives a variant (tensor/ops/attention.cpp). On cuda a tiled variant
// keeps its tiles in shared memory and registers: no scratch forward, one value per query row
// (D_i = dout_i . out_i) backward.
int64_t attention_workspace(const kernels::KernelEntry& v, const AttentionShape& s, bool backward) {
  const bool tiled = v.tag == kernels::VariantTag::fused || v.tag == kernels::VariantTag::optimized;
  if (!tiled) return kernels::attention_scores_workspace(s.b, s.h, s.l, s.l);
  if (case_device() == Device::cuda) return backward ? s.b * s.h * s.l : 0;
  return kernels::attention_tiled_workspace(s.l, s.d, omp_get_max_threads());
}

void fill_strides(int64_t (&st)[4], const AttentionShape& s) {
  st[3] = 1;
  st[2] = s.d;
  st[1] = s.l * s.d;
  st[0] = s.h * s.l * s.d;
}

class AttentionCase : public Case {
 public:
  AttentionCase(const AttentionShape& s, bool backward, uint64_t seed)
      : s_(s), backward_(backward) {
    const int64_t n = s.b * s.h * s.l * s.d;
    InputRng rng(seed);
    q_ = rng.vector(n), k_ = rng.vector(n), v_ = rng.vector(n), dout_ = rng.vector(n);
    out_ = GuardedBuffer(n), lse_ = GuardedBuffer(s.b * s.h * s.l);
    dq_ = GuardedBuffer(n), dk_ = GuardedBuffer(n), dv_ = GuardedBuffer(n);
    if (backward) {
      // Backward reads the forward's out and lse: compute them once with the naive kernel.
      const auto& naive =
          kernels::registry().at(kernels::ops::attention.name, Device::cpu).at("naive");
      CaseVector<float> ws(static_cast<size_t>(attention_workspace(naive, s, false)));
      kernels::AttentionArgs<float> f = forward_args();
      f.workspace = ws.data();
      f.workspace_size = static_cast<int64_t>(ws.size());
      naive.get<kernels::AttentionArgs, float>()(f);
    }
  }

  void run(const kernels::KernelEntry& v) override {
    CaseVector<float>& ws = workspace_for(v);
    if (!backward_) {
      kernels::AttentionArgs<float> a = forward_args();
      a.workspace = ws.data();
      a.workspace_size = static_cast<int64_t>(ws.size());
      v.get<kernels::AttentionArgs, float>()(a);
      return;
    }
    kernels::AttentionBackwardArgs<float> a{};
    a.q = q_.data(), a.k = k_.data(), a.v = v_.data(), a.out = out_.data();
    a.dout = dout_.data(), a.lse = lse_.data();
    a.dq = dq_.data(), a.dk = dk_.data(), a.dv = dv_.data();
    a.workspace = ws.data();
    a.workspace_size = static_cast<int64_t>(ws.size());
    a.batch = s_.b, a.heads = s_.h, a.lq = s_.l, a.lk = s_.l, a.d = s_.d;
    fill_strides(a.q_stride, s_), fill_strides(a.k_stride, s_), fill_strides(a.v_stride, s_);
    a.scale = 1.0 / std::sqrt(static_cast<double>(s_.d));
    a.causal = s_.causal;
    v.get<kernels::AttentionBackwardArgs, float>()(a);
  }
  void prepare_validation() override {
    if (backward_) {
      dq_.poison(), dk_.poison(), dv_.poison();
    } else {
      out_.poison(), lse_.poison();
    }
  }
  std::vector<Output> outputs() override {
    if (backward_) return {{"dq", &dq_}, {"dk", &dk_}, {"dv", &dv_}};
    return {{"out", &out_}};
  }
  profiler::Cost cost() const override {
    const Dims shape{s_.b, s_.h, s_.l, s_.d};
    return backward_ ? costs::attention_backward(shape, shape, s_.causal, 4)
                     : costs::attention(shape, shape, s_.causal, 4);
  }
  int64_t workspace_bytes(const kernels::KernelEntry& v) const override {
    return 4 * attention_workspace(v, s_, backward_);
  }

 private:
  kernels::AttentionArgs<float> forward_args() {
    kernels::AttentionArgs<float> a{};
    a.q = q_.data(), a.k = k_.data(), a.v = v_.data(), a.out = out_.data(), a.lse = lse_.data();
    a.batch = s_.b, a.heads = s_.h, a.lq = s_.l, a.lk = s_.l, a.d = s_.d;
    fill_strides(a.q_stride, s_), fill_strides(a.k_stride, s_), fill_strides(a.v_stride, s_);
    a.scale = 1.0 / std::sqrt(static_cast<double>(s_.d));
    a.causal = s_.causal;
    return a;
  }
  // One scratch buffer per variant kind, made on first use (timing must not allocate).
  CaseVector<float>& workspace_for(const kernels::KernelEntry& v) {
    CaseVector<float>& ws = naive_tag(v) || v.tag == kernels::VariantTag::user ? scores_ : tiles_;
    const size_t need = static_cast<size_t>(attention_workspace(v, s_, backward_));
    if (ws.size() < need) ws.resize(need);
    return ws;
  }

  AttentionShape s_;
  bool backward_;
  CaseVector<float> q_, k_, v_, dout_, scores_, tiles_;
  GuardedBuffer out_, lse_, dq_, dk_, dv_;
};

// ---- linear_gelu -------------------------------------------------------------------------------
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

// ---- linear ------------------------------------------------------------------------------------
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

}  // namespace

static void add_fused_op_infos(std::vector<OpInfo>& ops) {
  {
    OpInfo op;
    op.op = kernels::ops::layer_norm.name;
    op.size_syntax = kRowsSyntax;
    op.summary = "layer normalization of each row (two pass vs one pass)";
    op.default_sizes = {"4096x768", "512x4096", "16384x128"};
    op.validation_sizes = {"1x1", "1x7", "13x4099", "31x17", "5x1", "3x65536"};
    op.tolerance_why =
        "the one-pass kernel accumulates the mean and variance together (Welford-style) where "
        "the two-pass one subtracts the mean first: sums of up to 65536 terms in other orders";
    op.make = [](const std::string& size, uint64_t seed) -> std::unique_ptr<Case> {
      auto d = parse_dims(kernels::ops::layer_norm.name, kRowsSyntax, size, 2, 2);
      return std::make_unique<LayerNormCase>(d[0], d[1], seed);
    };
    ops.push_back(std::move(op));
  }
  {
    OpInfo op;
    op.op = kernels::ops::cross_entropy.name;
    op.size_syntax = kRowsSyntax;
    op.summary = "mean cross-entropy of logits against class indices (composed vs fused)";
    op.default_sizes = {"128x10", "4096x1000", "512x50257"};
    op.validation_sizes = {"1x1", "1x7", "7x1", "13x4099", "31x17", "3x65536"};
    op.tolerance = 1e-5;
    op.tolerance_why =
        "the fused pass sums exp(x - max) online, rescaling as the max grows, the composed "
        "one after a max pass: the same sum in another order, a few float32 ulps apart";
    op.make = [](const std::string& size, uint64_t seed) -> std::unique_ptr<Case> {
      auto d = parse_dims(kernels::ops::cross_entropy.name, kRowsSyntax, size, 2, 2);
      return std::make_unique<CrossEntropyCase>(d[0], d[1], seed);
    };
    ops.push_back(std::move(op));
  }
  for (bool backward : {false, true}) {
    OpInfo op;
    op.op = backward ? kernels::ops::attention_backward.name : kernels::ops::attention.name;
    op.size_syntax = kAttentionSyntax;
    op.summary = backward ? "gradients of attention: dq, dk, dv (naive vs flash)"
                          : "scaled dot-product attention (naive L x L scores vs flash tiles)";
    op.default_sizes = {"1x8x256x64:causal", "1x8x1024x64:causal", "1x8x1024x64"};
    op.validation_sizes = {"1x1x1x1", "1x2x37x3:causal", "2x1x65x8", "1x1x130x80:causal",
                           "1x3x17x64"};
    op.tolerance = 2e-4;
    op.tolerance_why =
        "flash attention rescales running sums tile by tile and its backward rebuilds P from "
        "the saved lse: sums of up to L*d products in other orders, and P's float32 exp error "
        "carried through two more products";
    const std::string name = op.op;
    op.make = [backward, name](const std::string& size, uint64_t seed) -> std::unique_ptr<Case> {
      return std::make_unique<AttentionCase>(parse_attention(name, size), backward, seed);
    };
    ops.push_back(std::move(op));
  }
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

const OpInfoFamily kFusedFamily(80, &add_fused_op_infos);

}  // namespace prism::opinfo
