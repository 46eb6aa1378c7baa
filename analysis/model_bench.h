// `prism bench MODEL`: a model's latency, throughput and memory as a service would see them.
//
// For each batch size: the first (cold) call is timed apart, a few warm-up calls follow, then
// every call of the timed stretch is timed on its own, so the result is a distribution (p50 to
// p99) and not one average. The profiler is off while timing; a short profiled window after it
// gives the exact per-call counters (FLOPs, bytes, allocations) and the time split by op class.
// Memory comes from two places: the process's peak resident set (what the OS gave the process,
// libraries included) and prism's own tracked peak split by role (what tensors held).
//
// The inputs are synthetic, of the model's shape, made once per batch size: an inference
// service receives its inputs, and a training benchmark asks what a step costs, not what the
// data loader costs.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analysis/bottleneck.h"
#include "analysis/environment.h"
#include "analysis/latency.h"
#include "analysis/op_class.h"
#include "analysis/server.h"
#include "analysis/workload.h"
#include "kernels/types.h"
#include "nn/models/zoo.h"
#include "profiler/counters.h"
#include "profiler/memory.h"

namespace prism::analysis {

struct BenchOptions {
  std::string model;
  BenchMode mode = BenchMode::infer;
  std::vector<int64_t> batches{1, 8, 64};
  int warmup = 5;          // warm calls before timing, after the cold one
  double duration_s = 2;   // timed stretch per batch size (ignored when iters > 0)
  int64_t iters = 0;       // > 0: exactly this many timed calls per batch size
  int64_t min_iters = 10;  // with a duration: at least this many timed calls
  int profile_calls = 5;   // calls in the profiled window (counters, op classes)
  Device device = Device::cpu;
  uint64_t seed = 42;
  nn::ModelOptions model_options;  // image size, context length, ...
  // Inputs from a data set instead of synthetic ones (its first examples); its shape must be
  // what model_options describe. `data_name` is what reports call it.
  std::shared_ptr<const nn::data::Dataset> data;
  std::string data_name;
  std::string data_spec;  // what `--data` was given ("spirals"), for the commands reports print
  // The server scenario (infer only): one run per rate, instead of the batch sweep.
  std::vector<double> qps;
  ServerOptions server;  // max_batch, max_wait_ms, duration_s, drain_s, seed (qps from above)
  double slo_ms = 0;     // > 0: report where the p99 latency crosses it
  // The process's resident memory before the command did any work (the binary and its
  // libraries), when the caller measured it; -1: read it when run_bench starts.
  int64_t resident_at_start = -1;
  bool check_environment = true;
  bool peak = true;  // look up (or measure, once) the machine's peak FLOP/s for "% of peak"
  // Count events per op in the profiled window (profiler/counters.h: cycles, instructions,
  // cache and branch misses where the machine allows them, page faults, context switches).
  bool counters = false;
  // Number formats: "fp32"; "bf16" (autocast: matmuls and convolutions in bfloat16, fp32 master
  // weights); "int8" (inference with post-training quantized weights and activations).
  std::string precision = "fp32";
  // Weights to time instead of the seed's: fp32/bf16, a `prism train --save` checkpoint; int8,
  // a `prism quantize` output ("" quantizes the model's own weights on the fly, calibrated
  // (minmax) on a few batches of the bench inputs: analysis/int8_bench.h). Loading both sides
  // of a compare lets its quality line compare a trained model with its int8 twin.
  std::string load_path;
};

// One op row of the profiled window, per model call (calls, time and counters divided by the
// number of calls in the window).
struct OpPerCall {
  std::string name, phase, variant, grad_of;
  double calls = 0, self_ns = 0;
  double flops = 0, bytes = 0, allocs = 0, alloc_bytes = 0;
  // With BenchOptions::counters: self event counts per model call (profiler::Counter order),
  // for the counters in event_mask (the rest were not counted: 0 here, null in the JSON).
  uint8_t event_mask = 0;
  double events[profiler::kNumCounters] = {};
};

// The deterministic counters of one model call, exactly: every call of a warm model does the
// same work, so they are the same in every run on every machine (tests compare them with ==).
struct CallCounters {
  int64_t flops = 0;
  int64_t macs = 0;
  int64_t bytes = 0;   // minimum traffic (profiler/cost.h)
  int64_t allocs = 0;  // tensor storage allocations
  int64_t alloc_bytes = 0;
  friend bool operator==(const CallCounters&, const CallCounters&) = default;
};

using RoleBytes = std::array<int64_t, profiler::kNumRoles>;

struct BatchResult {
  int64_t batch = 0;
  double cold_ns = 0;                // the first call, apart
  std::vector<double> samples_ns;    // every timed call
  LatencyStats latency;              // of samples_ns
  double throughput = 0;             // samples per second: batch / mean latency
  int64_t peak_rss_bytes = -1;       // VmHWM over this batch size's calls (-1 unknown)
  int64_t tracked_peak_bytes = 0;    // prism's tracked peak on the model's device
  RoleBytes tracked_peak_by_role{};  // what that peak was made of
  CallCounters counters;             // per call
  double flops_per_sample = 0;
  double gflops = 0;                             // counters.flops / p50
  double pct_peak = 0;                           // of the machine's measured FMA peak; 0 unknown
  std::array<double, kNumOpClasses> class_ns{};  // self time per call by op class
  std::vector<OpPerCall> ops;                    // the profiled window, per call, by self time
  // With BenchOptions::counters: the event counts of one model call (all its ops), for the
  // counters in event_mask.
  uint8_t event_mask = 0;
  double events[profiler::kNumCounters] = {};
  BottleneckMap bottleneck;  // the profiled window's (analysis/bottleneck.h)
};

// One rate of the server scenario.
struct ServerPoint {
  ServerResult run;
  LatencyStats latency;  // of run.latency_ns (empty when nothing completed)
  LatencyStats queue_wait;
};

struct BenchResult {
  BenchOptions options;
  Fingerprint fingerprint;
  Environment environment;
  std::string kernels;  // variants differing from the defaults ("matmul=naive"), "" none
  int64_t parameters = 0;
  std::string input;                // "[B,1,28,28] f32"
  int64_t baseline_rss_bytes = -1;  // resident before any work: the binary and its libraries
  double harness_ns = 0;            // cost of timing one call (the timing loop on an empty call)
  // What the profiler adds per op record in the profiled window (never in the timed calls).
  double profiler_overhead_ns = 0;
  // What the profiled windows counted (BenchOptions::counters), and the notice when the machine
  // refused some events: the same for every window, so reported once.
  profiler::CounterInfo counters;
  double machine_peak_gflops = 0;
  std::vector<BatchResult> batches;
  std::vector<ServerPoint> server;
  // Quality on fixed inputs, so a comparison can check that a faster run computes the same:
  // infer: the outputs for a seeded probe batch (logits; a GPT's last position), flattened;
  // train: the loss of the cold and warm-up steps of the first batch size.
  std::vector<double> probe_output;
  std::vector<double> train_losses;
  // The weights as the timed model stores them (int8: int8 weights + fp32 scales and biases)
  // and the float32 model's, in bytes; 0 when not measured (fp32 and bf16 runs).
  int64_t weight_bytes = 0, fp32_weight_bytes = 0;
  std::string int8_source;  // int8: the file loaded, or how it was calibrated
};

// Runs the benchmark; the caller applies kernel choices and the thread count first. Throws
// prism::Error on a bad option (unknown model, empty batch list, absurd sizes) before any work.
BenchResult run_bench(const BenchOptions& options);

// Checks the options as run_bench does, without running anything.
void check_bench_options(const BenchOptions& options);

// The tracked memory one call at `batch` needs, from a dry run on the meta device (shapes, no
// data: milliseconds even for a model that would not fit); what run_bench refuses a batch by.
// Building the model there also surfaces make_model's Error for an option it cannot take.
int64_t dry_run_peak_bytes(const BenchOptions& options, int64_t batch);
// This machine's physical memory in bytes; 0 when unknown.
int64_t physical_memory_bytes();

// The kernel variants chosen apart from the defaults, "op=variant" joined by commas, each op
// once (a choice applies on every device that has the variant; devices that run differently
// named variants for it share the item, "op=a/b"); "" when none.
std::string kernel_choices();

// The harness's own cost per timed call, in ns: the timing loop around a call that does nothing.
double measure_harness_ns(int64_t calls = 200'000);

// The fixed cost of an op call, in ns: a 1-element float32 add with the profiler off (the front
// end's checks, the cost formula, the kernel choice, the output's allocation, a kernel with one
// element to do) and, with `autograd`, on an input that requires grad, so each call also makes
// the autograd node a training step's ops make. The best of several runs of a few thousand
// calls (other processes only ever slow a run down); each measured once per process. The
// bottleneck map's overhead threshold is this plus the profiler's cost per record.
double measure_dispatch_ns(bool autograd);

// ---- `prism bench MODEL --model-off --data SET`: the input pipeline alone --------------------
// The DataLoader `prism train` uses (shuffled, full batches, one prefetching worker) feeds a
// trivial computation in place of the model, the sum of each batch's inputs (so every byte is
// touched and read back): what the loader alone can deliver. Beside it, the model's call at the
// same batch on preloaded inputs (what `prism bench` times), so the two rates compare.

struct PipelinePoint {
  int64_t batch = 0;
  LatencyStats latency;      // per batch: the wait for it and its sum
  double batches_per_s = 0;  // from the mean time per batch
  double samples_per_s = 0;
  double model_samples_per_s = 0;  // the model's call at this batch, preloaded inputs
};

struct PipelineResult {
  BenchOptions options;
  Fingerprint fingerprint;
  Environment environment;
  int64_t examples = 0;  // in the data set the loader serves
  std::vector<PipelinePoint> points;
  double checksum = 0;  // the sums of every batch, added: the computation's result
};

// Throws prism::Error when there is no data set, the server scenario is asked for, or a batch is
// larger than the data set (a loader that drops the short last batch would have none).
void check_pipeline_options(const BenchOptions& options);
PipelineResult run_pipeline_bench(const BenchOptions& options);
// The comparison a reader wants: "the loader delivers N samples/s; the model step consumes M
// samples/s: the loader is X times faster" (or slower: then the loader limits the run).
std::string pipeline_verdict(const PipelinePoint& p, BenchMode mode);
nlohmann::ordered_json pipeline_to_json(const PipelineResult& r);

}  // namespace prism::analysis
