#include "tensor/autograd/node.h"

#include <string>

#include "tensor/autograd/grad_mode.h"

namespace prism::autograd {

std::vector<Tensor> Node::apply(const Tensor& grad_out, std::vector<char>& added_in_place) {
  if (released_) {
    throw Error(std::string(op_) +
                ": backward through a graph that was already freed; call "
                "backward(grad, /*retain_graph=*/true) the first time to go through it again");
  }
  std::vector<Tensor> grads(next_.size());
  added_in_place.assign(next_.size(), 0);
  Grads g(*this, grads, added_in_place);
  fn_(grad_out, g);
  return grads;
}

Node::~Node() {
  // Each node holds its inputs' nodes (next_) and, in saved_ (or inside fn_), the input tensors
  // whose grad_fn are those same nodes. Freed naturally, each node frees the next from inside
  // its destructor: recursion as deep as the graph. Instead, move the edges to a worklist first
  // (so dropping the saved tensors frees no node), then empty every node we are the last owner
  // of before letting it go, so its own destructor has nothing left to do.
  std::vector<std::shared_ptr<Node>> work;
  for (Edge& e : next_) {
    if (e.fn) work.push_back(std::move(e.fn));
  }
  next_.clear();
  fn_ = nullptr;
  drop_saved();
  while (!work.empty()) {
    std::shared_ptr<Node> n = std::move(work.back());
    work.pop_back();
    if (n.use_count() != 1) continue;  // someone else still holds it: not ours to free
    for (Edge& e : n->next_) {
      if (e.fn) work.push_back(std::move(e.fn));
    }
    n->next_.clear();
    n->fn_ = nullptr;
    n->drop_saved();
  }  // n, now empty, is freed here
}

void Node::save(Tensor t, const SaveSpec& spec) {
  if (num_saved_ == kMaxSaved) {
    throw Error(std::string(op_) + ": saves more than " + std::to_string(kMaxSaved) +
                " tensors for backward (a bug: raise Node::kMaxSaved)");
  }
  saved_[num_saved_++] = SavedTensor(std::move(t), spec);
}

const SavedTensor& Node::saved(int i) const {
  if (i < 0 || i >= num_saved_) {
    throw Error(std::string(op_) + " backward: asked for saved tensor " + std::to_string(i) +
                " of " + std::to_string(num_saved_) + " (a bug in the op's backward)");
  }
  return saved_[i];
}

void Node::check_saved() const {
  for (int i = 0; i < num_saved_; ++i) saved_[i].check(op_);
}

void Node::drop_saved() {
  for (int i = 0; i < num_saved_; ++i) saved_[i] = SavedTensor();
  num_saved_ = 0;
}

void Node::release() {
  fn_ = nullptr;  // drops whatever the backward function captured
  drop_saved();   // and every tensor saved for backward
  released_ = true;
}

namespace {

Edge edge_of(const Tensor& t) {
  if (!t.defined() || !t.requires_grad()) return {};
  if (t.grad_fn()) return {t.grad_fn(), nullptr};
  return {nullptr, t.impl_ptr()};
}

void attach(Tensor& out, const char* op, std::vector<Edge> edges,
            std::initializer_list<SaveSpec> saved, BackwardFn fn) {
  auto node =
      std::make_shared<Node>(op, std::move(fn), std::move(edges), profiler::current_scope());
  for (const SaveSpec& s : saved) {
    const Tensor& t = *s.tensor;
    // `out` itself would hold this node through its grad_fn: keep a detached view of it.
    node->save(t.defined() && t.impl_ptr() == out.impl_ptr() ? t.detach() : t, s);
  }
  out.impl().grad_fn = std::move(node);
  out.impl().requires_grad = true;
  if (detecting_non_finite()) check_finite(out, op, "forward");
}

}  // namespace

bool should_record(std::initializer_list<const Tensor*> inputs) {
  if (!grad_enabled()) return false;
  for (const Tensor* t : inputs) {
    if (t && t->defined() && t->requires_grad()) return true;
  }
  return false;
}

void attach_node(Tensor& out, const char* op, std::initializer_list<const Tensor*> inputs,
                 std::initializer_list<SaveSpec> saved, BackwardFn fn) {
  std::vector<Edge> edges;
  edges.reserve(inputs.size());
  for (const Tensor* t : inputs) edges.push_back(t ? edge_of(*t) : Edge{});
  attach(out, op, std::move(edges), saved, std::move(fn));
}

void record(Tensor& out, const char* op, const std::vector<Tensor>& inputs, BackwardFn fn) {
  if (!grad_enabled()) return;
  bool any = false;
  std::vector<Edge> edges;
  edges.reserve(inputs.size());
  for (const Tensor& t : inputs) {
    edges.push_back(edge_of(t));
    any = any || edges.back().active();
  }
  if (any) attach(out, op, std::move(edges), {}, std::move(fn));
}

}  // namespace prism::autograd
