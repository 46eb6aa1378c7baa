#include "nn/layers/checkpoint.h"

#include <cstdlib>
#include <vector>

#include "profiler/recorder.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/autograd/node.h"
#include "tensor/random.h"

namespace prism::nn {

namespace {

thread_local int t_recomputing = 0;

// Marks the recompute (recomputing() is true inside), also when it ends by an exception.
class RecomputeMark {
 public:
  RecomputeMark() { ++t_recomputing; }
  ~RecomputeMark() { --t_recomputing; }
  RecomputeMark(const RecomputeMark&) = delete;
  RecomputeMark& operator=(const RecomputeMark&) = delete;
};

// Rewinds the default generator to `state` (where it was before the checkpointed forward, so
// Dropout draws the same masks) and, on leaving, puts it back where it was on entering: the
// draws after the backward are then those of a run without checkpointing.
class ReplayRandom {
 public:
  explicit ReplayRandom(const Generator& state) : now_(default_generator()) {
    default_generator() = state;
  }
  ~ReplayRandom() { default_generator() = now_; }
  ReplayRandom(const ReplayRandom&) = delete;
  ReplayRandom& operator=(const ReplayRandom&) = delete;

 private:
  Generator now_;
};

}  // namespace

bool recomputing() {
  return t_recomputing > 0;
}

Tensor checkpoint(Module& m, const Tensor& x) {
  // The node's inputs: x and every parameter of m. The parameters are listed so the node is
  // recorded when they require grad even if x does not (the first block of a model fed raw
  // data); their gradients do not flow along these edges but from the inner backward below.
  std::vector<Tensor> inputs{x};
  for (const Tensor& p : m.parameters()) inputs.push_back(p);
  bool any = false;
  for (const Tensor& t : inputs) any = any || (t.defined() && t.requires_grad());
  if (!grad_enabled() || !any) return m.forward(x);

  const Generator rng_before = default_generator();
  Tensor y;
  {
    NoGrad no_graph;  // the forward's buffers are freed as they go out of use
    y = m.forward(x);
  }
  // A module that hands its input back (an identity, dropout with p = 0) computed nothing to
  // recompute, and a node attached to y would be attached to x itself.
  if (y.impl_ptr() == x.impl_ptr()) return y;

  // What the recompute reads, checked for in-place changes like any saved tensor.
  std::vector<autograd::SavedTensor> kept;
  kept.emplace_back(x.detach(), autograd::input(x, 0, "input"));
  for (size_t i = 1; i < inputs.size(); ++i) {
    kept.emplace_back(inputs[i], autograd::input(inputs[i], static_cast<int>(i), "parameter"));
  }

  Module* module = &m;
  // The backward: recompute, then backpropagate through the recomputed graph.
  auto backward = [module, kept, rng_before](const Tensor& g, autograd::Grads& grads) {
    for (const autograd::SavedTensor& s : kept) s.check("checkpoint");
    // A fresh leaf for the input: the inner backward stops there and leaves dL/dx in its .grad.
    Tensor x_leaf = kept[0].tensor().detach();
    if (grads.needs(0)) x_leaf.set_requires_grad(true);
    Tensor y_again;
    {
      // We are inside the engine: grad mode off, phase backward, role gradient. The recompute is
      // a forward: graph recorded, its buffers activations, shown as phase "recompute".
      EnableGrad record_graph;
      profiler::PhaseGuard phase(profiler::Phase::recompute);
      AllocRole role(MemRole::activation);
      ReplayRandom same_masks(rng_before);
      RecomputeMark mark;
      y_again = module->forward(x_leaf);
    }
    // The engine is re-entrant: run_backward keeps its whole state (the dependency counts, the
    // pending gradients) in locals and restores the thread's guards on return, so running it
    // from inside a node is an ordinary nested call. It accumulates into the parameters' .grad
    // (once: the outer graph has no other path to them) and into x_leaf.grad, and frees the
    // recomputed graph when done.
    if (y_again.requires_grad()) autograd::run_backward(y_again, g, /*retain_graph=*/false);
    Tensor dx = x_leaf.grad();
    if (dx.defined()) grads.set(0, "checkpoint.dx", [&] { return dx; });
  };
  autograd::record(y, "checkpoint", inputs, backward);
  return y;
}

int64_t checkpoint_stride(const std::string& spec, const std::string& who) {
  if (spec.empty()) return 0;
  if (spec == "blocks") return 1;
  const std::string prefix = "every-";
  if (spec.rfind(prefix, 0) == 0 && spec.size() > prefix.size() &&
      spec.size() < prefix.size() + 6) {
    const std::string digits = spec.substr(prefix.size());
    bool ok = true;
    for (char c : digits) ok = ok && c >= '0' && c <= '9';
    const int64_t n = ok ? std::atoll(digits.c_str()) : 0;
    if (n >= 1) return n;
  }
  throw Error(who + ": unknown checkpoint value '" + spec +
              "'; accepted: blocks (every block) or every-N with N >= 1 (every N-th block)");
}

}  // namespace prism::nn
