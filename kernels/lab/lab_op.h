// How the lab drives one op: a LabOp makes Cases (fresh random inputs of one size) and a Case
// runs any registered variant of the op on its own buffers.
//
// A kernel sees only pointers, sizes and strides (DESIGN.md), so the lab calls kernels
// directly, without tensors, autograd or the profiler: what it times is the kernel alone.
// Each op's adapter (lab_ops_*.cpp) knows the op's argument struct, what a size means
// ("MxKxN" for matmul, "ROWSxCOLS" for softmax), its cost, and which buffers are outputs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/args.h"
#include "kernels/lab/guarded_buffer.h"
#include "kernels/lab/lab_memory.h"
#include "kernels/registry.h"
#include "profiler/cost.h"

namespace prism::lab {

// One output of a case, compared element by element against the baseline's.
struct Output {
  std::string name;  // "c", "dx", "param", ...
  GuardedBuffer* buffer;
};

// One problem instance: inputs, outputs and the argument struct that points at them.
class Case {
 public:
  virtual ~Case() = default;
  // Runs the variant's float32 kernel once on this case's buffers.
  virtual void run(const kernels::KernelEntry& variant) = 0;
  // Prepares the outputs for a validation run: by default every output is poisoned with NaN so
  // an element the kernel never writes fails the comparison. Ops that accumulate into their
  // output, or update state in place, override this to restore a known starting state.
  virtual void prepare_validation();
  virtual std::vector<Output> outputs() = 0;
  // FLOPs, MACs and minimum bytes of one run (the same formula as the op's front end).
  virtual profiler::Cost cost() const = 0;
  // Extra memory a variant needs beyond inputs and outputs, in bytes, when the lab can know it
  // (a workspace the case allocates on the kernel's behalf); 0 otherwise.
  virtual int64_t workspace_bytes(const kernels::KernelEntry&) const { return 0; }
};

// Random inputs in [-1, 1), reproducible from a seed (splitmix64): every variant of one
// validation sees exactly the same numbers. vector() gives a LabVector (lab_memory.h), memory a
// kernel on the lab's device can read.
class InputRng {
 public:
  explicit InputRng(uint64_t seed) : state_(seed) {}
  uint64_t next_u64();
  float uniform(float low = -1.f, float high = 1.f);
  LabVector<float> vector(int64_t n, float low = -1.f, float high = 1.f);

 private:
  uint64_t state_;
};

struct LabOp {
  std::string op;                          // the registry's op name
  std::string size_syntax;                 // what a size means, for --help and errors: "MxKxN[:tn]"
  std::string summary;                     // one line for `prism lab --list`
  std::vector<std::string> default_sizes;  // timed when --sizes is not given
  std::vector<std::string> validation_sizes;  // odd shapes every variant must pass
  // Largest normalized error (max |y - ref| / max |ref|) a correct float32 variant may show.
  double tolerance = 1e-4;
  // Makes a case of `size` from `seed`; throws prism::Error naming the syntax on a bad size.
  std::function<std::unique_ptr<Case>(const std::string& size, uint64_t seed)> make;
};

// Every op the lab knows, in the order `prism lab --list` shows them.
const std::vector<LabOp>& lab_ops();
// The op named `name`; an unknown name is an Error listing the ops the lab knows.
const LabOp& find_lab_op(const std::string& name);

// Parses "AxBxC" into positive integers (each at most 2^40), between `min_count` and
// `max_count` of them; anything else is an Error naming the op and its size syntax.
std::vector<int64_t> parse_dims(const std::string& op, const std::string& syntax,
                                const std::string& text, size_t min_count, size_t max_count);
// Splits "1024:tn" into "1024" and "tn" (no ':' gives an empty suffix).
std::pair<std::string, std::string> split_suffix(const std::string& text);

}  // namespace prism::lab
