// The backward engine: runs the recorded graph in reverse topological order.
//
// 1. Walk the graph from the root's node and count, for every node, how many gradient
//    contributions it will receive (one per edge that points at it). A node freed by an earlier
//    backward, or one whose saved tensors were modified in place since its forward
//    (tensor/autograd/saved.h), is found here, before any work is done, so a refused call
//    changes nothing.
// 2. Start with the root's node and the root gradient. A node runs once all of its
//    contributions have arrived (they are summed first); its input gradients flow along its
//    edges: into the producing node's pending sum, or into a leaf's .grad.
//
// Everything runs with grad mode off and the profiler phase set to backward; each node runs in
// the profiler scope of its forward call, so a module's backward ops are attributed to it.
//
// Re-entrant: all of a call's state is local and the guards restore the thread's settings, so a
// node may run a backward of its own from inside apply() (activation checkpointing does:
// nn/layers/checkpoint.h).
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tensor/autograd/grad_mode.h"
#include "tensor/autograd/grad_ready.h"
#include "tensor/autograd/node.h"
#include "tensor/ops.h"

namespace prism::autograd {

namespace {

thread_local const std::function<void(const TensorImpl&)>* t_grad_ready = nullptr;
thread_local int t_backward_depth = 0;  // run_backward calls open on this thread

struct DepthGuard {
  DepthGuard() { ++t_backward_depth; }
  ~DepthGuard() { --t_backward_depth; }
};

void check_grad_matches(const char* op, const Tensor& g, const Dims& shape, DType dtype) {
  if (!(g.shape() == shape) || g.dtype() != dtype) {
    throw Error(std::string(op) + " backward: produced a gradient of shape " + g.shape().str() +
                " " + dtype_name(g.dtype()) + " for an input of shape " + shape.str() + " " +
                dtype_name(dtype) + " (a bug in the op's backward)");
  }
}

void accumulate_into_leaf(TensorImpl& leaf, const Tensor& g, const char* op) {
  check_grad_matches(op, g, leaf.shape, leaf.dtype);
  if (!leaf.grad) {
    // .grad must be a dense buffer of the leaf's own, which a user or an optimizer can read
    // with data<T>() and change in place. An incoming gradient often is not: sum's is a
    // stride-0 expand of one number, add hands the same tensor to both inputs, and a root
    // gradient passed to backward() is the caller's. Those are copied; a fresh buffer that no
    // one else holds (accumulation_buffer) is kept as it is, at no cost.
    if (accumulation_buffer(g.impl_ptr())) {
      leaf.grad = g.impl_ptr();
    } else {
      profiler::GradOfGuard label("accumulate grad");
      leaf.grad = clone(g).impl_ptr();
    }
  } else if (accumulation_buffer(leaf.grad)) {
    // A second contribution (a tied weight, a parameter used twice, gradient accumulation over
    // micro-batches): summed into the buffer that exists, no new one.
    profiler::GradOfGuard label("accumulate grad");
    add_into(Tensor(leaf.grad), g);
  } else {
    profiler::GradOfGuard label("accumulate grad");
    leaf.grad = add(Tensor(leaf.grad), g).impl_ptr();
  }
}

}  // namespace

bool accumulation_buffer(const std::shared_ptr<TensorImpl>& t) {
  if (!t || t.use_count() != 1 || !t->storage || t->storage.use_count() != 1) return false;
  const Tensor dense(t);  // the counts are taken: this handle's own reference does not matter
  return dense.offset() == 0 && dense.is_contiguous();
}

Tensor Grads::accumulation_target(int i) {
  if (!needs(i)) return Tensor();
  const Edge& e = node_.next()[static_cast<size_t>(i)];
  if (!e.leaf || !accumulation_buffer(e.leaf->grad)) return Tensor();
  // A .grad set by hand to another shape, dtype or device must not be written with the leaf's
  // geometry: the op makes a fresh gradient instead, and the engine's add then refuses it.
  const TensorImpl& grad = *e.leaf->grad;
  if (!(grad.shape == e.leaf->shape) || grad.dtype != e.leaf->dtype ||
      grad.storage->device() != e.leaf->storage->device()) {
    return Tensor();
  }
  added_in_place_[static_cast<size_t>(i)] = 1;
  return Tensor(e.leaf->grad);
}

GradReadyHook::GradReadyHook(std::function<void(const TensorImpl& leaf)> fn)
    : fn_(std::move(fn)), saved_(t_grad_ready) {
  t_grad_ready = &fn_;
}

GradReadyHook::~GradReadyHook() {
  t_grad_ready = saved_;
}

const std::function<void(const TensorImpl&)>* GradReadyHook::current() {
  return t_grad_ready;
}

void run_backward(const Tensor& root, const Tensor& grad_in, bool retain_graph) {
  if (!root.defined()) throw Error("backward: called on an undefined tensor");
  if (!root.requires_grad()) {
    throw Error("backward: tensor " + root.shape().str() +
                " does not require grad (no input of the ops that made it has requires_grad)");
  }
  Tensor grad = grad_in;
  if (!grad.defined()) {
    if (root.numel() != 1) {
      throw Error(
          "backward: a gradient can be created implicitly only for a one-element output; "
          "this output has shape " +
          root.shape().str() + ", so pass backward(grad) with a gradient of that shape");
    }
  } else if (!(grad.shape() == root.shape())) {
    throw Error("backward: gradient shape " + grad.shape().str() + " does not match output shape " +
                root.shape().str());
  } else if (grad.dtype() != root.dtype()) {
    throw Error(std::string("backward: gradient dtype ") + dtype_name(grad.dtype()) +
                " does not match output dtype " + dtype_name(root.dtype()));
  } else if (grad.device() != root.device()) {
    // Checked here, once: the backward ops trust their inputs to share a device, and a cpu
    // kernel handed a meta tensor's absent data would crash.
    throw Error(std::string("backward: gradient on ") + device_name(grad.device()) +
                " for an output on " + device_name(root.device()));
  }

  DepthGuard depth;
  // Leaves are counted (and reported when done) only by the outermost backward, with a hook.
  const std::function<void(const TensorImpl&)>* ready_hook =
      t_backward_depth == 1 ? t_grad_ready : nullptr;
  NoGrad no_grad;
  profiler::PhaseGuard phase(profiler::Phase::backward);
  AllocRole role(MemRole::gradient);
  // The implicit root gradient is backward's first buffer: made here, under the guards, it is
  // tagged gradient and recorded in the backward phase like the rest.
  if (!grad.defined()) grad = ones_like(root);

  // A leaf: its gradient is the root gradient (copied if the caller still holds it).
  if (!root.grad_fn()) {
    accumulate_into_leaf(root.impl(), grad, "backward");
    return;
  }

  // 1. Discover the graph and count incoming contributions.
  std::unordered_map<Node*, int> deps;
  std::unordered_map<const TensorImpl*, int> leaf_deps;  // with a hook: edges into each leaf
  std::vector<Node*> stack{root.grad_fn().get()};
  deps[root.grad_fn().get()] = 0;
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    if (n->released()) {
      throw Error(std::string(n->op()) +
                  ": backward through a graph that was already freed; call "
                  "backward(grad, /*retain_graph=*/true) the first time to go through it again");
    }
    n->check_saved();
    for (const Edge& e : n->next()) {
      if (ready_hook && e.leaf) ++leaf_deps[e.leaf.get()];
      if (!e.fn) continue;
      auto [it, first] = deps.try_emplace(e.fn.get(), 0);
      ++it->second;
      if (first) stack.push_back(e.fn.get());
    }
  }

  // 2. Run nodes whose contributions are all in.
  std::unordered_map<Node*, Tensor> pending;
  pending[root.grad_fn().get()] = grad;
  std::vector<Node*> ready{root.grad_fn().get()};
  while (!ready.empty()) {
    Node* n = ready.back();
    ready.pop_back();
    Tensor g = std::move(pending[n]);
    pending.erase(n);
    // A node none of whose contributions carried a gradient has nothing to propagate, but
    // still passes "nothing" on, so the nodes below it are not left waiting.
    std::vector<Tensor> grads(n->next().size());
    std::vector<char> added_in_place(n->next().size(), 0);
    if (g.defined()) {
      profiler::ScopeRestore scope(n->scope());
      grads = n->apply(g, added_in_place);
    }
    // Drop the incoming gradient now: an input gradient that is a view of it (a transpose's
    // backward) is then the only holder of its buffer, and a leaf can keep it without a copy.
    g = Tensor();
    if (!retain_graph) n->release();
    for (size_t i = 0; i < n->next().size(); ++i) {
      const Edge& e = n->next()[i];
      const Tensor& gi = grads[i];
      // An op that added into the leaf's .grad itself (Grads::accumulation_target) is done.
      if (e.leaf && gi.defined() && !added_in_place[i]) accumulate_into_leaf(*e.leaf, gi, n->op());
      if (ready_hook && e.leaf && --leaf_deps[e.leaf.get()] == 0) (*ready_hook)(*e.leaf);
      if (!e.fn) continue;
      Node* m = e.fn.get();
      if (gi.defined()) {
        auto it = pending.find(m);
        if (it == pending.end() || !it->second.defined()) {
          pending[m] = gi;
        } else if (accumulation_buffer(it->second.impl_ptr())) {
          // A tensor used twice (the residual stream, q, k and v of one buffer): the second
          // gradient is added into the first, which only this sum holds.
          profiler::GradOfGuard label("accumulate grad");
          add_into(it->second, gi);
        } else {
          profiler::GradOfGuard label("accumulate grad");
          it->second = add(it->second, gi);
        }
      }
      if (--deps[m] == 0) ready.push_back(m);
    }
  }
}

}  // namespace prism::autograd
