// What an autograd node keeps for backward, and the check that it is still what the forward saw.
//
// Backward reads the tensors an op saved (its inputs, its output, buffers of its own) long
// after the forward ran. If one of them is modified in place in between (an optimizer step, a
// write through data<T>() followed by bump_version()), backward would compute the gradient from
// the new values, silently wrong. So every tensor a node keeps is a SavedTensor: it notes the
// version counter of the tensor's memory (Storage::version, shared by all views of the storage)
// and which storage it is when saved, and check() throws a prism::Error naming the op, the
// saved tensor, its shape and both versions when either moved. The engine checks every node of
// the graph before it runs any (tensor/autograd/engine.cpp), so a refused backward changes no
// gradient. The cost: two loads and two compares per saved tensor.
//
// An op names what it saves with input(), output() or internal() in its autograd::record() call
// and reads it back in backward with Grads::saved(i) (tensor/autograd/node.h).
#pragma once

#include <cstdint>

#include "tensor/tensor.h"

namespace prism::autograd {

enum class SavedKind : uint8_t {
  input,     // one of the op's arguments (or a view of one)
  output,    // what the op returned (or a view of it)
  internal,  // a buffer the op made for its backward (layer_norm's mean, max_pool2d's argmax)
};

// What an op asks record() to keep, and how an error names it. `name` is a string literal or
// nullptr.
struct SaveSpec {
  const Tensor* tensor;
  SavedKind kind;
  int index;  // the input's position among the op's tensor arguments (kind input)
  const char* name;
};

// Argument number `i` of the op (or a view of it, or a contiguous copy made of it).
inline SaveSpec input(const Tensor& t, int i, const char* name = nullptr) {
  return {&t, SavedKind::input, i, name};
}
// The op's result (or a view of it); `name` tells one of several outputs apart ("lse").
inline SaveSpec output(const Tensor& t, const char* name = nullptr) {
  return {&t, SavedKind::output, 0, name};
}
// A buffer the op made only for its backward.
inline SaveSpec internal(const Tensor& t, const char* name) {
  return {&t, SavedKind::internal, 0, name};
}

class SavedTensor {
 public:
  SavedTensor() = default;
  // Keeps `t` (undefined is allowed: nothing is kept) and the state of its memory now.
  SavedTensor(Tensor t, const SaveSpec& spec)
      : t_(std::move(t)), name_(spec.name), index_(spec.index), kind_(spec.kind) {
    if (t_.defined()) {
      storage_id_ = t_.storage()->id();
      version_ = t_.storage()->version();
    }
  }

  const Tensor& tensor() const { return t_; }
  // Throws a prism::Error naming `op` when the memory was modified in place since the save, or
  // is another buffer now (nn::assign and Module::to swap a tensor's buffer).
  void check(const char* op) const {
    if (!t_.defined()) return;
    const Storage& s = *t_.storage();
    if (s.version() != version_ || s.id() != storage_id_) fail(op);
  }
  // The words an error uses for it: "input #0", "its output", "its output lse", ...
  std::string describe() const;

 private:
  [[noreturn]] void fail(const char* op) const;

  Tensor t_;
  uint64_t storage_id_ = 0;
  uint64_t version_ = 0;
  const char* name_ = nullptr;
  int index_ = 0;
  SavedKind kind_ = SavedKind::internal;
};

}  // namespace prism::autograd
