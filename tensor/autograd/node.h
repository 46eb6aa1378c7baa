// An autograd node: one recorded op call, able to turn the gradient of its output into the
// gradients of its inputs.
//
// The graph is built while the forward runs (define-by-run): each tracked op's output points
// to its node (TensorImpl::grad_fn), and each node points to where its inputs' gradients go
// (`next`: the node that made the input, or the input itself if it is a leaf). Nodes hold what
// backward needs until backward frees it: the tensors as SavedTensors (inputs, outputs, buffers
// of the op's own: tensor/autograd/saved.h, checked against in-place modification), everything
// else (shapes, geometry) captured in the backward function. A node never holds its own output
// through a graph link (a saved output is a detached view), so there are no cycles.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "tensor/autograd/saved.h"
#include "tensor/tensor.h"

namespace prism::autograd {

class Node;

// Where the gradient of one input goes.
struct Edge {
  std::shared_ptr<Node> fn;          // the input was made by a tracked op
  std::shared_ptr<TensorImpl> leaf;  // or the input is a leaf that requires grad
  bool active() const { return fn || leaf; }
};

// What a backward function writes its input gradients into.
class Grads {
 public:
  // `added_in_place` (one entry per input, all false) records which gradients an op added into
  // their leaf's .grad itself (accumulation_target); the engine then adds them no second time.
  Grads(const Node& node, std::vector<Tensor>& out, std::vector<char>& added_in_place)
      : node_(node), out_(out), added_in_place_(added_in_place) {}
  // Whether input i needs a gradient at all (skip the work when it does not).
  bool needs(int i) const;
  // Computes input i's gradient with `f` when it is needed. `label` names it in the profile
  // ("matmul.dA"); it must be a string literal.
  template <class F>
  void set(int i, const char* label, F&& f);
  // Saved tensor i, in the order the op's record() call listed them (undefined if the op saved
  // an undefined tensor there).
  const Tensor& saved(int i) const;
  // The buffer input i's gradient may be added into, if there is one: input i is a leaf whose
  // .grad already exists, has the leaf's shape, dtype and device, and is prism's alone to write
  // (accumulation_buffer()). An op whose gradient is a sparse update (index_select's: a few rows
  // of a 50257 x 768 table) must then add its rows there and return that very tensor from
  // set()'s function: a defined result marks input i as added in place, and the engine adds
  // nothing more. Undefined otherwise: make a fresh gradient as usual.
  Tensor accumulation_target(int i);

 private:
  const Node& node_;
  std::vector<Tensor>& out_;
  std::vector<char>& added_in_place_;
};

using BackwardFn = std::function<void(const Tensor& grad_out, Grads& grads)>;

class Node {
 public:
  Node(const char* op, BackwardFn fn, std::vector<Edge> next, int32_t scope)
      : op_(op), fn_(std::move(fn)), next_(std::move(next)), scope_(scope) {}
  // Tears down the chain of nodes this one alone keeps alive with a loop, not recursion, so
  // dropping a graph 100,000 ops deep (an RNN, a loss summed over a long run) cannot overflow
  // the stack.
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  const char* op() const { return op_; }
  const std::vector<Edge>& next() const { return next_; }
  int32_t scope() const { return scope_; }
  bool released() const { return released_; }

  // At most this many tensors per node (attention saves q, k, v, out and lse). Inline, so a
  // node that saves tensors allocates nothing more.
  static constexpr int kMaxSaved = 5;
  // Keeps `t` for backward (record() calls it).
  void save(Tensor t, const SaveSpec& spec);
  int num_saved() const { return num_saved_; }
  const SavedTensor& saved(int i) const;
  // Throws a prism::Error naming the op if a saved tensor was modified in place since the
  // forward (SavedTensor::check). The engine calls it on every node before running any.
  void check_saved() const;

  // Gradients of the inputs (undefined where an input needs none). added_in_place[i] is set
  // (resized to one entry per input) when input i's gradient was added into its leaf's .grad by
  // the op itself (Grads::accumulation_target).
  std::vector<Tensor> apply(const Tensor& grad_out, std::vector<char>& added_in_place);
  // Frees everything saved for backward; a later apply is an error.
  void release();

 private:
  void drop_saved();

  const char* op_;
  BackwardFn fn_;
  std::vector<Edge> next_;
  SavedTensor saved_[kMaxSaved];
  int num_saved_ = 0;
  int32_t scope_;  // profiler scope of the forward call: backward ops are attributed there
  bool released_ = false;
};

// Records `fn` as the backward of `out` = op(inputs) when grad mode is on and some input
// requires grad; does nothing otherwise. Called by every differentiable op's front end.
// (A template, so the std::function, a heap allocation, is only built when it is needed.)
//
// `saved` lists the tensors backward reads, named for errors, which `fn` gets back with
// gr.saved(i): a backward function keeps tensors this way, never by capturing them, so that a
// tensor modified in place between forward and backward is refused with an error instead of
// giving a wrong gradient (tensor/autograd/saved.h). Nothing is saved when nothing is recorded.
// A saved `out` is kept as a detached view (no cycle through its grad_fn).
//
//   autograd::record(out, "exp", {&x}, {autograd::output(out)},
//                    [](const Tensor& g, autograd::Grads& gr) {
//                      gr.set(0, "exp.dx", [&] { return mul(g, gr.saved(0)); });
//                    });
template <class F>
void record(Tensor& out, const char* op, std::initializer_list<const Tensor*> inputs,
            std::initializer_list<SaveSpec> saved, F&& fn);
// The same for an op whose backward needs no tensor.
template <class F>
void record(Tensor& out, const char* op, std::initializer_list<const Tensor*> inputs, F&& fn);
void record(Tensor& out, const char* op, const std::vector<Tensor>& inputs, BackwardFn fn);
// Whether a call with these inputs will be recorded.
bool should_record(std::initializer_list<const Tensor*> inputs);

// The non-template part of record(); call record() instead.
void attach_node(Tensor& out, const char* op, std::initializer_list<const Tensor*> inputs,
                 std::initializer_list<SaveSpec> saved, BackwardFn fn);

// Whether gradient buffer `t` is prism's alone: dense (contiguous, its storage from offset 0)
// and held by nobody else (use counts of 1 from its one holder: a leaf's .grad, the engine's
// pending sum, a freshly computed gradient). Such a buffer may become a leaf's .grad without a
// copy, and may be summed into in place. A gradient the caller still holds (a user's `auto g =
// p.grad()`) or that is a view of another (a bucket's slice, add's one gradient handed to both
// inputs) is never written: it is replaced by a fresh sum instead.
bool accumulation_buffer(const std::shared_ptr<TensorImpl>& t);

// Runs backward from `root` (tensor/autograd/engine.cpp).
void run_backward(const Tensor& root, const Tensor& grad, bool retain_graph);

}  // namespace prism::autograd

#include "profiler/recorder.h"
#include "tensor/autograd/anomaly.h"

namespace prism::autograd {

inline bool Grads::needs(int i) const {
  return i < static_cast<int>(node_.next().size()) && node_.next()[static_cast<size_t>(i)].active();
}

inline const Tensor& Grads::saved(int i) const {
  return node_.saved(i).tensor();
}

template <class F>
void record(Tensor& out, const char* op, std::initializer_list<const Tensor*> inputs,
            std::initializer_list<SaveSpec> saved, F&& fn) {
  if (should_record(inputs)) attach_node(out, op, inputs, saved, BackwardFn(std::forward<F>(fn)));
}

template <class F>
void record(Tensor& out, const char* op, std::initializer_list<const Tensor*> inputs, F&& fn) {
  if (should_record(inputs)) attach_node(out, op, inputs, {}, BackwardFn(std::forward<F>(fn)));
}

template <class F>
void Grads::set(int i, const char* label, F&& f) {
  if (!needs(i)) return;
  profiler::GradOfGuard g(label);
  out_[static_cast<size_t>(i)] = f();
  if (detecting_non_finite()) check_finite(out_[static_cast<size_t>(i)], label, "backward");
}

}  // namespace prism::autograd
