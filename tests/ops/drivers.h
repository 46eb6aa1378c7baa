// Tensor-level drivers of the ops, for two tests that run every op: the variants test
// (tests/ops/variants_test.cpp: how to make an op's inputs and call it through its front end,
// so that every variant, chosen with kernels::Use, is checked against the naive one on the same
// inputs) and the determinism test (tests/ops/determinism_test.cpp: the same bits on 1 and 2
// threads, ThreadCase below).
//
// An op's drivers live in its folder, kernels/ops/<op>/drivers.cpp (compiled into the kernels
// test suite only), and add themselves to the table:
//   const DriverFile kDrivers([](DriverTable& d) { d["rope"] = {...}; });
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tensor/autograd/grad_mode.h"
#include "tensor/ops.h"
#include "tensor/random.h"
#include "tensor/storage.h"
#include "tests/tensor/reference.h"

namespace prism::kernels {

// Makes the inputs of one case, then runs the op on them (possibly forward + backward, for the
// backward kernels) and returns the tensor the kernel under test produced.
struct Driver {
  std::function<std::vector<Tensor>(DType, ref::Rng&, bool strided)> make;
  std::function<Tensor(const std::vector<Tensor>&)> run;
};

// A meta tensor with x's shape, dtype and layout: contiguous, any permutation of a contiguous
// tensor (a transpose), or a 1-D view of every other element (the layouts ref::make_input makes).
inline Tensor meta_like(const Tensor& x) {
  DefaultDevice meta(Device::meta);
  if (x.dim() == 1 && x.strides()[0] == 2) {
    const int64_t n = x.shape()[0];
    return empty({2 * n + 1}, x.dtype()).slice(0, 1, 2 * n + 1, 2);
  }
  // The dims by decreasing stride: the order in which x's storage holds them.
  std::vector<int64_t> order(static_cast<size_t>(x.dim()));
  for (int d = 0; d < x.dim(); ++d) order[static_cast<size_t>(d)] = d;
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return x.strides()[static_cast<int>(a)] > x.strides()[static_cast<int>(b)];
  });
  const Tensor stored = x.permute(Dims(order));
  if (!stored.is_contiguous()) {
    throw Error("meta_like: a layout the drivers do not make: " + x.shape().str());
  }
  Dims inverse(order);
  for (int d = 0; d < x.dim(); ++d) inverse[static_cast<int>(order[static_cast<size_t>(d)])] = d;
  return empty(stored.shape(), x.dtype()).permute(inverse);
}

// A driver's input: values from rng in [lo, hi), contiguous or (`strided`) transposed. Under
// DefaultDevice(Device::meta), a meta tensor of the same shape, dtype and layout (the values are
// drawn all the same, so that the rest of the driver sees the same rng).
inline Tensor input(const ref::Shape& s, bool strided, DType dt, ref::Rng& rng, double lo = -1,
                    double hi = 1) {
  const Device device = default_device();
  DefaultDevice cpu(Device::cpu);
  const Tensor t = ref::make_input(s, strided ? ref::Layout::transposed : ref::Layout::contiguous,
                                   dt, rng, lo, hi)
                       .t;
  return device == Device::meta ? meta_like(t) : t;
}

// int64 indices in [0, high) of shape s, from rng; meta ones under DefaultDevice(Device::meta).
inline Tensor index_input(const ref::Shape& s, ref::Rng& rng, int64_t high) {
  const Device device = default_device();
  DefaultDevice cpu(Device::cpu);
  const Tensor t = ref::to_tensor(ref::indices(s, rng, high), DType::i64);
  return device == Device::meta ? meta_like(t) : t;
}

// A fixed random gradient for an output y, the same values for the same seed; on the meta device,
// which holds no values, a tensor of y's shape there (tests/ops/tensor_level_test.cpp runs every
// driver on meta tensors too).
inline Tensor grad_for(const Tensor& y, uint64_t seed) {
  if (y.device() == Device::meta) return ones_like(y);
  ref::Rng rng(seed);
  return ref::to_tensor(ref::random(y.shape().vec(), rng), y.dtype());
}

// A float input for a backward driver: the op is run on a fresh leaf made from it, and backward
// from the output gradient g.
inline Tensor grad_of_input(const Tensor& x, const std::function<Tensor(const Tensor&)>& f,
                            const Tensor& g) {
  Tensor leaf = x.detach();
  leaf.set_requires_grad();
  f(leaf).backward(g);
  return leaf.grad();
}

// The same, backward from grad_for(output, seed).
inline Tensor grad_of_input(const Tensor& x, const std::function<Tensor(const Tensor&)>& f,
                            uint64_t seed) {
  Tensor leaf = x.detach();
  leaf.set_requires_grad();
  Tensor y = f(leaf);
  y.backward(grad_for(y, seed));
  return leaf.grad();
}

// Each op's drivers, by op name.
using DriverTable = std::map<std::string, std::vector<Driver>>;

// What each op folder's drivers.cpp adds to the table (a function-local static: it exists before
// the first DriverFile runs, whatever the order of static initialisation).
inline std::vector<std::function<void(DriverTable&)>>& driver_files() {
  static std::vector<std::function<void(DriverTable&)>> files;
  return files;
}

struct DriverFile {
  explicit DriverFile(std::function<void(DriverTable&)> add) {
    driver_files().push_back(std::move(add));
  }
};

// ---- The determinism test's cases (tests/ops/determinism_test.cpp) -------------------------
// One case: make the inputs (from a fixed seed), run forward and backward, and return every
// tensor a kernel wrote: the output, then each input's gradient. Its sizes are past the op's
// grain (kernels/cpu/parallel.h), so the kernel really splits the work over the threads.
struct ThreadCase {
  std::string name;
  std::vector<std::string> ops;  // the ops whose rows must show 2 threads
  std::function<std::vector<Tensor>()> run;
  std::string folder = {};  // the op folder whose drivers.cpp added it
};

struct ThreadCaseFile {
  using Add = std::function<void(std::vector<ThreadCase>&)>;
  // `folder`: the op folder the file is in, whose per-op test runs its cases (per_op.h).
  ThreadCaseFile(std::string folder, Add add) {
    files().push_back({std::move(folder), std::move(add)});
  }
  // Every folder's cases, each marked with its folder.
  static std::vector<ThreadCase> all() {
    std::vector<ThreadCase> cases;
    for (const auto& [folder, add] : files()) {
      const size_t first = cases.size();
      add(cases);
      for (size_t i = first; i < cases.size(); ++i) cases[i].folder = folder;
    }
    return cases;
  }

 private:
  static std::vector<std::pair<std::string, Add>>& files() {
    static std::vector<std::pair<std::string, Add>> list;
    return list;
  }
};

inline void seeded(uint64_t seed) {
  manual_seed(seed);
}

// Runs f on fresh leaves made from `inputs`, backward from a fixed random gradient of its
// output; returns the output and the gradients of the float inputs.
inline std::vector<Tensor> forward_backward(
    const std::vector<Tensor>& inputs, const std::function<Tensor(const std::vector<Tensor>&)>& f) {
  std::vector<Tensor> leaves;
  for (const Tensor& t : inputs) {
    leaves.push_back(t.dtype() == DType::i64 ? t : t.detach().set_requires_grad());
  }
  Tensor y = f(leaves);
  manual_seed(99);
  y.backward(randn(y.shape()));
  std::vector<Tensor> out{y};
  for (const Tensor& l : leaves) {
    if (l.dtype() != DType::i64) out.push_back(l.grad());
  }
  return out;
}

// int64 indices in [0, high) of the given shape, from a fixed linear congruential sequence.
inline Tensor ids(int64_t high, const Dims& shape) {
  std::vector<int64_t> v(static_cast<size_t>(shape.numel()));
  uint64_t x = 12345;
  for (int64_t& e : v) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    e = static_cast<int64_t>((x >> 33) % static_cast<uint64_t>(high));
  }
  return from_vector(v, shape);
}

}  // namespace prism::kernels
