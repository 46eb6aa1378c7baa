// A hook told when backward has finished a leaf's gradient: data-parallel training
// (nn/dist/ddp.h) sends a bucket of gradients to the other ranks as soon as all of its leaves
// are done, while backward goes on with the earlier layers.
//
// "Finished" means the last contribution the graph holds for that leaf has been added to its
// .grad, counted exactly: run_backward counts every edge that points at each leaf before it
// runs any node (it already walks the graph to count node dependencies) and calls the hook when
// a leaf's count reaches zero, also for a leaf none of whose contributions carried a gradient
// (its .grad is then unchanged). Only the outermost backward of a thread calls the hook: a
// backward run from inside a node (activation checkpointing re-runs its block's backward) does
// not count leaves. A checkpointed block's parameters are still reported, by the outer backward:
// the checkpoint node lists them as its inputs (nn/layers/checkpoint.cpp), so their edges are
// counted there and done when that node has run its nested backward.
//
//   autograd::GradReadyHook hook([&](const TensorImpl& leaf) { ... });
//   loss.backward();   // the hook runs on this thread, between backward's nodes
//
// A hook is per thread and nests (the previous one is back when this one is destroyed).
#pragma once

#include <functional>

#include "tensor/tensor.h"

namespace prism::autograd {

class GradReadyHook {
 public:
  explicit GradReadyHook(std::function<void(const TensorImpl& leaf)> fn);
  ~GradReadyHook();
  GradReadyHook(const GradReadyHook&) = delete;
  GradReadyHook& operator=(const GradReadyHook&) = delete;

  // The hook in force on this thread (null when none).
  static const std::function<void(const TensorImpl&)>* current();

 private:
  std::function<void(const TensorImpl&)> fn_;
  const std::function<void(const TensorImpl&)>* saved_;
};

}  // namespace prism::autograd
