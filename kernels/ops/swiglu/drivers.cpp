// swiglu's drivers for the variants and determinism tests (tests/ops/drivers.h; compiled into
// the per-op test suite only): swiglu and its gradients.
#include "tests/ops/drivers.h"
#include "tensor/ops.h"

namespace prism::kernels {
namespace {

const DriverFile kDrivers([](DriverTable& d) {
  // swiglu and its backward (dgate and dup side by side): gate and up of their own, and the two
  // halves of one [rows, 2 hidden] projection (row stride 2 hidden).
  auto gate_up = [](DType dt, ref::Rng& rng, bool strided) {
    return std::vector<Tensor>{input({5, 37, 131}, strided, dt, rng, -6, 6),
                               input({5, 37, 131}, false, dt, rng, -2, 2),
                               input({5, 37, 131}, false, dt, rng)};
  };
  auto halves = [](DType dt, ref::Rng& rng, bool strided) {
    Tensor both = input({37, 2 * 131}, strided, dt, rng, -6, 6);
    return std::vector<Tensor>{both.slice(-1, 0, 131), both.slice(-1, 131, 2 * 131),
                               input({37, 131}, false, dt, rng)};
  };
  using Make = decltype(Driver::make);
  for (const Make& make : {Make(gate_up), Make(halves)}) {
    d["swiglu"].push_back(
        {make, [](const std::vector<Tensor>& in) { return swiglu(in[0], in[1]); }});
    d["swiglu_backward"].push_back({make, [](const std::vector<Tensor>& in) {
                                      Tensor gate = in[0].detach().set_requires_grad();
                                      Tensor up = in[1].detach().set_requires_grad();
                                      swiglu(gate, up).backward(in[2]);
                                      return concat({gate.grad().flatten(), up.grad().flatten()});
                                    }});
    // One gradient asked for: the kernel writes dgate alone.
    d["swiglu_backward"].push_back({make, [](const std::vector<Tensor>& in) {
                                      Tensor gate = in[0].detach().set_requires_grad();
                                      swiglu(gate, in[1]).backward(in[2]);
                                      return gate.grad();
                                    }});
  }
});

// The determinism test's cases (tests/ops/determinism_test.cpp): sizes past the kernels'
// grains, so the work really splits over the threads.
const ThreadCaseFile kThreadCases("swiglu", [](std::vector<ThreadCase>& c) {
  using V = std::vector<Tensor>;
  // SwiGLU, forward and backward: gate read through a transpose (column stride != 1), and gate
  // and up the two halves of one [rows, 2 hidden] projection. Rows of 131 and 257 elements, so
  // chunks of elements start and end mid-row.
  c.push_back({"swiglu, strided", {"swiglu", "swiglu_backward"}, [] {
                 seeded(18);
                 return forward_backward({randn({131, 67}), randn({67, 131})}, [](const V& in) {
                   return swiglu(in[0].transpose(0, 1), in[1]);
                 });
               }});
  c.push_back({"swiglu, halves of one projection", {"swiglu", "swiglu_backward"}, [] {
                 seeded(19);
                 return forward_backward({randn({61, 2 * 257})}, [](const V& in) {
                   return swiglu(in[0].slice(-1, 0, 257), in[0].slice(-1, 257, 2 * 257));
                 });
               }});
});

}  // namespace
}  // namespace prism::kernels
