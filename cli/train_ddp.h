// `prism train MODEL --ddp`: what data parallelism adds to a training run (cli/cmd_train.cpp,
// train_steps.cpp). The gradient averaging itself is nn/dist/ddp.h; this is the run around it:
//
//   mpirun -np N build/prism train mlp --ddp --batch 128
//
// - Start: MPI is initialised before anything else (without a launcher: a usage error, exit 2);
//   ranks other than 0 send their standard output to /dev/null, so rank 0 alone prints (errors
//   still reach stderr, prefixed by the rank); each rank takes cores / (ranks on its machine)
//   OpenMP threads unless --threads or PRISM_THREADS says otherwise.
// - Same run everywhere: after the model is built, every rank's configuration (model, data,
//   batch, optimizer, schedule, steps, seed, precision, buckets, the parameters' shapes) is
//   compared with rank 0's; a rank that differs stops every rank with an error naming the first
//   field that differs. Then rank 0's initial weights are broadcast.
// - Each step: rank r trains on part r of N of the global batch (nn/data/loader.h, shards);
//   the loss and the correct count are summed across ranks (one small allreduce), so the
//   progress line, the divergence check and the learning-rate schedule see the global batch.
// - Every --check-every steps, and after the last, the weights' checksums are compared.
//   Buffers that are not parameters (BatchNorm's running statistics) are each rank's own, from
//   its own shards, and not compared; rank 0's are the ones evaluated and saved. Each rank draws
//   its own dropout masks (rank 0 the plain run's stream).
// - Rank 0 alone evaluates and saves; every rank profiles its window, and rank 0 writes one
//   trace with a process row per rank (--trace).
//
// Testing hook: PRISM_DDP_FAULT=RANK:STEP:exit|hang|perturb makes rank RANK leave (exit code
// 3), stop answering (sleep), or nudge one of its weights when it reaches step STEP (1-based),
// to check that the others stop with an error instead of hanging, and that the weight checksum
// catches ranks that drift apart (tests/cli/ddp_test.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "cli/cmd_train.h"
#include "cli/commands.h"
#include "nn/dist/comm.h"
#include "nn/dist/ddp.h"
#include "nn/module.h"
#include "profiler/session.h"

namespace prism::cli {

// Initialises MPI for a --ddp run (a UsageError without a launcher), silences the standard
// output of ranks other than 0 and picks the default thread count. Call first.
dist::Comm& start_ddp(const TrainOptions& o);

// A description of the run that every rank must share, one "field: value" line each.
std::string ddp_config(const TrainOptions& o, const std::string& data_name, int64_t train_size,
                       int64_t batch, double lr, const std::string& optimizer, int64_t steps,
                       const nn::Module& model);

// Compares every rank's ddp_config with rank 0's (a collective): throws an Error naming the
// ranks and the first field that differs.
void check_same_config(dist::Comm& comm, const std::string& config);

// Every rank's trace of its profiled window (`trace`, this rank's) merged at rank 0 into one,
// a process row per rank, on rank 0's clock (a collective; "" on other ranks). The ranks' clocks
// are the machine's monotonic clock, so on one machine each rank's offset is the difference of
// the sessions' starts; across machines they would need aligning (not done: stated in the trace).
// Without the --ddp-timeout deadline: the other ranks wait here for rank 0's evaluation.
std::string merged_rank_trace(dist::Comm& comm, const profiler::Profile& profile,
                              const std::string& trace);

// Applies PRISM_DDP_FAULT for this rank at this step (1-based), if it names them.
void maybe_inject_fault(const dist::Comm& comm, int64_t step, nn::Module& model);

}  // namespace prism::cli
