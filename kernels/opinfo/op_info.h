// One description per op (after PyTorch's OpInfo and ggml's test-backend-ops): an OpInfo says how
// to build the op's argument struct from raw buffers, what a size means ("MxKxN" for matmul,
// "RxC" for softmax), its sample sizes (odd shapes, size 1, primes, strided views,
// broadcasting, edge values), its cost (the op's formula from kernels/costs.h), and how far a
// correct float32 variant may be from the baseline, with the reason. Everything that runs a
// kernel outside the tensor front end iterates over these descriptions instead of keeping its
// own copy: the lab (`prism lab`: validation, then timing), the variants test (every CPU variant
// of every op on every sample), the CUDA test (every CUDA variant against the CPU baseline) and
// the benchmarks. validate.h is the one validation routine; guarded_buffer.h the one guarded
// buffer.
//
// A kernel sees only pointers, sizes and strides (DESIGN.md), so a Case calls kernels directly,
// without tensors, autograd or the profiler: what the lab times is the kernel alone.
//
// Adding an op: write its OpInfo in its folder's opinfo.cpp (kernels/ops/<op>/; CMake picks up
// every one) and register the file's family once at namespace scope, its rank placing it in the
// list (a folder whose backward is listed among the other gradients registers two families):
//   const OpInfoFamily kRmsNormFamily(850, &add_rms_norm_op_infos);  // 850: its place in --list
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/args.h"
#include "kernels/opinfo/case_memory.h"
#include "kernels/opinfo/guarded_buffer.h"
#include "kernels/registry.h"
#include "profiler/cost.h"

namespace prism::opinfo {

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
  // Copies outputs that are not float32 (argmax's int64 positions) into the float
  // GuardedBuffers that outputs() lists, so that one comparison covers every output. Called by
  // validate_variant after each run (after the device has finished), never while timing; ops
  // whose outputs are all float have nothing to do.
  virtual void collect() {}
  virtual std::vector<Output> outputs() = 0;
  // FLOPs, MACs and minimum bytes of one run (the same formula as the op's front end).
  virtual profiler::Cost cost() const = 0;
  // Extra memory a variant needs beyond inputs and outputs, in bytes, when the lab can know it
  // (a workspace the case allocates on the kernel's behalf); 0 otherwise.
  virtual int64_t workspace_bytes(const kernels::KernelEntry&) const { return 0; }
};

// Random inputs in [-1, 1), reproducible from a seed (splitmix64): every variant of one
// validation sees exactly the same numbers. vector() gives a CaseVector (case_memory.h), memory a
// kernel on the lab's device can read.
class InputRng {
 public:
  explicit InputRng(uint64_t seed) : state_(seed) {}
  uint64_t next_u64();
  float uniform(float low = -1.f, float high = 1.f);
  CaseVector<float> vector(int64_t n, float low = -1.f, float high = 1.f);

 private:
  uint64_t state_;
};

struct OpInfo {
  std::string op;                          // the registry's op name
  std::string size_syntax;                 // what a size means, for --help and errors: "MxKxN[:tn]"
  std::string summary;                     // one line for `prism lab --list`
  std::vector<std::string> default_sizes;  // timed when --sizes is not given
  std::vector<std::string> validation_sizes;  // odd shapes every variant must pass
  // Largest normalized error (max |y - ref| / max |ref|) a correct float32 variant may show,
  // and why that much: which sums or transcendentals a variant may order or approximate
  // differently from the baseline. (Cases run in float32; float64 is checked through the
  // front end by the gradient checks.)
  double tolerance = 1e-4;
  std::string tolerance_why;
  // Makes a case of `size` from `seed`; throws prism::Error naming the syntax on a bad size.
  std::function<std::unique_ptr<Case>(const std::string& size, uint64_t seed)> make;
};

// Registers one file's OpInfos while the library loads; `rank` orders the families in
// op_infos() (static initialisation runs in no fixed order across files).
struct OpInfoFamily {
  OpInfoFamily(int rank, void (*add)(std::vector<OpInfo>&));
};

// Every op described, in the order `prism lab --list` shows them.
const std::vector<OpInfo>& op_infos();
// The op named `name`; an unknown name is an Error listing the ops the lab knows.
const OpInfo& find_op_info(const std::string& name);

// Parses "AxBxC" into positive integers (each at most 2^40), between `min_count` and
// `max_count` of them; anything else is an Error naming the op and its size syntax.
std::vector<int64_t> parse_dims(const std::string& op, const std::string& syntax,
                                const std::string& text, size_t min_count, size_t max_count);
// Splits "1024:tn" into "1024" and "tn" (no ':' gives an empty suffix).
std::pair<std::string, std::string> split_suffix(const std::string& text);

// The size of a row-wise op, "RxC": R rows of C columns, each handled on its own; with ":t"
// (where `transposable`) the input is read through a transpose, column stride R instead of 1,
// the layout the front end hands a kernel for a reduction over a leading dim or a transposed
// view. A bad size is an Error naming `syntax`.
struct RowShape {
  int64_t rows, cols;
  bool transposed;
  int64_t row_stride() const { return transposed ? 1 : cols; }
  int64_t col_stride() const { return transposed ? rows : 1; }
};
RowShape parse_row_shape(const std::string& op, const std::string& syntax, const std::string& size,
                         bool transposable = true);

// The row ops' size syntax, as `--sizes` help and errors print it: with and without ":t".
inline constexpr const char* kRowSyntax = "RxC (rows x columns)";
inline constexpr const char* kRowSyntaxT =
    "RxC (rows x columns), optionally :t (read through a transpose)";

// The start of a row-wise op's description (reductions, softmax): its name and summary, the
// row syntax with :t, and the sizes they share: a classifier's head, wide rows, a transposed
// read; one element, primes, one column and a row of 65536 for validation.
OpInfo row_op_info(const char* name, const char* summary);

// A size's letter-number parameters, "s2p1" -> {s: 2, p: 1} (conv2d's stride and padding,
// pooling's window too); a letter outside `allowed` or a missing number is an Error naming the
// op and its size syntax.
std::map<char, int64_t> parse_size_params(const std::string& op, const std::string& syntax,
                                          const std::string& size, const std::string& text,
                                          const std::string& allowed);

// Whether a variant is tagged naive: the unfused ones, whose scratch is the full-size
// temporaries the composed ops would allocate (layer_norm, cross_entropy, attention, linear).
inline bool naive_tag(const kernels::KernelEntry& v) {
  return v.tag == kernels::VariantTag::naive;
}

}  // namespace prism::opinfo
