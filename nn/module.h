// Module: the base of every layer and model. It owns named parameters (trainable tensors),
// named buffers (non-trainable state such as BatchNorm's running statistics) and named child
// modules, all kept in the order they were registered.
//
//   class MLP : public prism::nn::Module {
//    public:
//     MLP() {
//       fc1 = register_module("fc1", std::make_shared<Linear>(784, 256));
//       fc2 = register_module("fc2", std::make_shared<Linear>(256, 10));
//     }
//     Tensor forward(const Tensor& x) override { return (*fc2)(prism::relu((*fc1)(x))); }
//     std::string type_name() const override { return "MLP"; }
//     std::shared_ptr<Linear> fc1, fc2;
//   };
//
// Calling a module, `(*model)(x)`, opens a profiler scope named after the module and runs
// forward() inside it. Scopes nest, so the ops of fc1 above land under the path "model.fc1":
// the top module is called "model" unless set_name() says otherwise, and a child is called by
// the name it was registered under. Backward ops are attributed to the same path (the autograd
// engine re-enters each forward op's scope), so a profile splits time per module with no code
// in the layers: nn/ calls tensor ops only, and every tensor op is recorded.
//
// Modules are shared, not copied: hold them in std::shared_ptr. Parameters are Tensor handles;
// the layer's member (`weight`), named_parameters() and an optimizer all hold the same tensor,
// so an update made through one is seen by all (see assign() below).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "tensor/tensor.h"

namespace prism::nn {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

class Module {
 public:
  Module() = default;
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // Runs forward(x) inside a profiler scope named name().
  Tensor operator()(const Tensor& x);
  virtual Tensor forward(const Tensor& x) = 0;

  // The class name shown in summaries ("Linear").
  virtual std::string type_name() const = 0;
  // The layer's configuration, shown after the type in tree() ("in=784, out=256, bias=true").
  virtual std::string extra_repr() const { return ""; }

  // The scope name: "model" for a top module, the registered name for a child.
  const std::string& name() const { return name_; }
  void set_name(std::string name);

  // ---- parameters, buffers, children --------------------------------------------------------
  // Recursive, in registration order, with dotted names relative to this module
  // ("blocks.0.attn.qkv.weight"). A tensor reachable under two names (shared weights) is listed
  // once, under the first.
  NamedTensors named_parameters() const;
  std::vector<Tensor> parameters() const;
  NamedTensors named_buffers() const;
  std::vector<Tensor> buffers() const;
  // Parameters then buffers: everything a checkpoint holds (nn/safetensors.h).
  NamedTensors named_state() const;
  // This module's direct children, in registration order.
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_children() const;
  // This module ("") and every descendant, depth first, with dotted paths.
  std::vector<std::pair<std::string, const Module*>> named_modules() const;
  // Total number of parameter elements (recursive, shared tensors counted once).
  int64_t parameter_count() const;

  // ---- modes --------------------------------------------------------------------------------
  // Training mode (the default) or evaluation mode, for this module and all its descendants.
  // Dropout and BatchNorm read it; other layers behave the same either way.
  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  // ---- activation checkpointing (nn/layers/checkpoint.h) -----------------------------------
  // When on, calling this module keeps only its input and re-runs its forward in backward
  // instead of keeping its activations: less memory, one more forward of this module per step.
  // Names, paths and parameters stay as they are (a checkpointed model loads the same files).
  void set_checkpointed(bool on = true) { checkpointed_ = on; }
  bool is_checkpointed() const { return checkpointed_; }

  // Drops every parameter's .grad (an absent gradient, not a zero tensor: the next backward
  // allocates a fresh one, and memory reports show no gradient memory between steps).
  void zero_grad();

  // Converts every floating-point parameter and buffer to `dtype` in place: the tensor handles
  // stay the same, so members, named_parameters() and anything else holding them see the new
  // dtype. Used to run gradient checks in float64 on a layer built in float32. Call it before
  // creating an optimizer's state; gradients are dropped. Integer buffers are left alone.
  void to(DType dtype);
  // Moves every parameter and buffer to `device` in place, the same way (handles unchanged,
  // gradients dropped): model.to(Device::cuda) before creating the optimizer.
  void to(Device device);

  // ---- summaries ----------------------------------------------------------------------------
  // One line per module, indented by depth: name, type, configuration and parameter count
  // (its own subtree's), e.g.
  //   model: Sequential                                        params 269,322
  //     0: Linear(in=784, out=256, bias=true)                  params 200,960
  std::string tree() const;
  // Calls `visit(path, module, depth)` for this module and every descendant, depth first.
  void walk(
      const std::function<void(const std::string& path, const Module& m, int depth)>& visit) const;

 protected:
  // Registers a trainable tensor: marks it requires_grad, tags its storage as parameter
  // memory, and returns the same handle (store it in a member).
  Tensor register_parameter(const std::string& name, Tensor t);
  // Registers non-trainable state saved with the model (running statistics). Its memory is
  // tagged parameter too: it is model state, not an activation.
  Tensor register_buffer(const std::string& name, Tensor t);
  // Registers a child; its name becomes `name`, so its ops run under "<this path>.<name>".
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> m) {
    add_child(name, m);
    return m;
  }

 private:
  void add_child(const std::string& name, std::shared_ptr<Module> m);
  void check_new_name(const std::string& name) const;
  friend struct ModuleAccess;  // module.cpp: lets the recursive collectors read the lists
  void walk_impl(const std::string& path, int depth,
                 const std::function<void(const std::string&, const Module&, int)>& visit) const;

  std::string name_ = "model";
  bool training_ = true;
  bool checkpointed_ = false;
  NamedTensors params_;
  NamedTensors buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
};

std::ostream& operator<<(std::ostream& os, const Module& m);

// Replaces the values behind `dst` (a leaf: a parameter or buffer) with those of `src`, keeping
// dst's handle, so every holder of dst sees the new values. Shapes, dtypes and devices must
// match. It is how an update computed with tensor ops is written back (BatchNorm's running
// statistics; an SGD step `assign(p, p - lr * p.grad())` under NoGrad) without a kernel call:
// when src is a fresh contiguous result that nothing else holds, dst simply adopts its buffer
// (retagged to dst's memory role); otherwise src is first cloned (a profiled copy).
// Like any in-place update, do it after backward: a graph recorded before still refers to the
// tensor.
void assign(const Tensor& dst, const Tensor& src);

}  // namespace prism::nn
