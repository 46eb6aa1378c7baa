// The descriptions of swiglu and swiglu_backward (kernels/args.h has the math).
//
// Size "RxC": R rows of C columns, gate and up each a contiguous [R, C] buffer. ":split" makes
// them the two halves of one [R, 2C] buffer (gate its first C columns, up the last C: row stride
// 2C), what the front end hands the kernel when a model computes gate and up with one fused
// projection and slices it. ":t" reads gate through a transpose (stored [C, R]: column stride R)
// while up stays contiguous, so the two inputs walk memory differently. The backward case reads
// gate and up the same ways; g, dgate and dup are contiguous, as the front end makes them.
#include "kernels/costs.h"
#include "kernels/opinfo/op_info.h"
#include "kernels/ops/swiglu/op.h"

namespace prism::opinfo {
namespace {

constexpr const char* kSyntax =
    "RxC (rows x columns), optionally :split (gate and up the two halves of one [R, 2C] buffer) "
    "or :t (gate read through a transpose)";

enum class Form { separate, split, transposed };

struct Halves {
  int64_t rows, cols;
  Form form;
};

Halves parse_halves(const std::string& op, const std::string& size) {
  auto [dims_text, form] = split_suffix(size);
  const auto d = parse_dims(op, kSyntax, dims_text, 2, 2);
  if (form.empty()) return {d[0], d[1], Form::separate};
  if (form == "split") return {d[0], d[1], Form::split};
  if (form == "t") return {d[0], d[1], Form::transposed};
  throw Error("lab " + op + ": bad form ':" + form + "' in '" + size + "': expected " + kSyntax);
}

// gate and up of one case, in the buffers and with the strides its form says.
struct GateUp {
  CaseVector<float> gate_storage, up_storage;  // up_storage is empty for :split
  const float* gate = nullptr;
  const float* up = nullptr;
  int64_t gate_rs = 0, gate_cs = 0, up_rs = 0, up_cs = 0;

  GateUp(const Halves& s, InputRng& rng) {
    const int64_t n = s.rows * s.cols;
    // Pre-activations of a trained FFN are of order 1; [-6, 6) also reaches both of sigmoid's
    // branches and its saturated ends, where silu(z) -> 0 or z.
    if (s.form == Form::split) {
      gate_storage = rng.vector(2 * n, -6, 6);
      for (int64_t r = 0; r < s.rows; ++r) {  // the up half in up's own range
        for (int64_t j = 0; j < s.cols; ++j) {
          gate_storage[r * 2 * s.cols + s.cols + j] = rng.uniform(-2, 2);
        }
      }
      gate = gate_storage.data();
      up = gate_storage.data() + s.cols;
      gate_rs = up_rs = 2 * s.cols;
      gate_cs = up_cs = 1;
      return;
    }
    gate_storage = rng.vector(n, -6, 6);
    up_storage = rng.vector(n, -2, 2);
    gate = gate_storage.data();
    up = up_storage.data();
    up_rs = s.cols, up_cs = 1;
    if (s.form == Form::transposed) {
      gate_rs = 1, gate_cs = s.rows;
    } else {
      gate_rs = s.cols, gate_cs = 1;
    }
  }
};

class SwiGluCase : public Case {
 public:
  SwiGluCase(const Halves& s, uint64_t seed)
      : rng_(seed), in_(s, rng_), out_(s.rows * s.cols), numel_(s.rows * s.cols) {
    a_ = {};
    a_.gate = in_.gate, a_.up = in_.up, a_.out = out_.data();
    a_.rows = s.rows, a_.cols = s.cols;
    a_.gate_rs = in_.gate_rs, a_.gate_cs = in_.gate_cs;
    a_.up_rs = in_.up_rs, a_.up_cs = in_.up_cs;
  }
  void run(const kernels::KernelEntry& v) override { v.get<kernels::SwiGluArgs, float>()(a_); }
  std::vector<Output> outputs() override { return {{"out", &out_}}; }
  profiler::Cost cost() const override { return costs::swiglu(numel_, 4); }

 private:
  InputRng rng_;
  GateUp in_;
  GuardedBuffer out_;
  int64_t numel_;
  kernels::SwiGluArgs<float> a_;
};

class SwiGluBackwardCase : public Case {
 public:
  SwiGluBackwardCase(const Halves& s, uint64_t seed)
      : rng_(seed),
        in_(s, rng_),
        dgate_(s.rows * s.cols),
        dup_(s.rows * s.cols),
        numel_(s.rows * s.cols) {
    g_ = rng_.vector(numel_);
    a_ = {};
    a_.gate = in_.gate, a_.up = in_.up, a_.g = g_.data();
    a_.dgate = dgate_.data(), a_.dup = dup_.data();
    a_.rows = s.rows, a_.cols = s.cols;
    a_.gate_rs = in_.gate_rs, a_.gate_cs = in_.gate_cs;
    a_.up_rs = in_.up_rs, a_.up_cs = in_.up_cs;
  }
  void run(const kernels::KernelEntry& v) override {
    v.get<kernels::SwiGluBackwardArgs, float>()(a_);
  }
  std::vector<Output> outputs() override { return {{"dgate", &dgate_}, {"dup", &dup_}}; }
  profiler::Cost cost() const override { return costs::swiglu_backward(numel_, true, true, 4); }

 private:
  InputRng rng_;
  GateUp in_;
  CaseVector<float> g_;
  GuardedBuffer dgate_, dup_;
  int64_t numel_;
  kernels::SwiGluBackwardArgs<float> a_;
};

void add_swiglu_op_infos(std::vector<OpInfo>& ops) {
  for (bool backward : {false, true}) {
    OpInfo op;
    op.op = backward ? "swiglu_backward" : "swiglu";
    op.size_syntax = kSyntax;
    op.summary = backward ? "gradients of swiglu: dgate and dup (four passes vs one)"
                          : "silu(gate) * up, LLaMA's FFN gate (two passes vs one fused pass)";
    // LLaMA-7B's FFN (hidden 11008) over 4096 tokens, gate and up sliced from one projection;
    // TinyLlama-1.1B's (5632) over 2048 tokens; and 1.4 MB operands that stay in L2.
    op.default_sizes = {"4096x11008:split", "2048x5632", "256x1376"};
    op.validation_sizes = {"1x1",         "1x7",     "7x1",           "13x4099",
                           "31x17:split", "17x31:t", "4099x13:split", "3x65536"};
    op.tolerance = 1e-5;
    op.tolerance_why =
        "every element on its own, no sums: variants differ only where a compiler contracts a "
        "multiply-add into one rounding, or a GPU's expf is 2 ulp from glibc's, a few float32 "
        "ulps of the largest element";
    const std::string name = op.op;
    op.make = [backward, name](const std::string& size, uint64_t seed) -> std::unique_ptr<Case> {
      const Halves h = parse_halves(name, size);
      if (backward) return std::make_unique<SwiGluBackwardCase>(h, seed);
      return std::make_unique<SwiGluCase>(h, seed);
    };
    ops.push_back(std::move(op));
  }
}

}  // namespace

const OpInfoFamily kSwiGluFamily(860, &add_swiglu_op_infos);

}  // namespace prism::opinfo
