// The descriptions (OpInfos) of attention and attention_backward for the lab and the
// op-description tests (the math is in args.h).
//
// Size "BxHxLxD[:causal]". Each variant gets the scratch the front end would give it: the naive
// one its L x L scores per head, tiled (flash) attention its per-thread tiles, so the lab times
// what a training step runs and reports the extra memory.
#include <omp.h>

#include <cmath>

#include "kernels/opinfo/op_info.h"
#include "kernels/ops/attention/op.h"

namespace prism::opinfo {
namespace {

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

void add_attention_op_infos(std::vector<OpInfo>& ops) {
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
}

}  // namespace

const OpInfoFamily kAttentionFamily(802, &add_attention_op_infos);

}  // namespace prism::opinfo
