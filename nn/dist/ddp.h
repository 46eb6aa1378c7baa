// Data-parallel gradient synchronisation: every rank holds the whole model, trains on its own
// shard of each global batch, and before each optimizer step the gradients are averaged across
// the ranks, so every rank applies the same update and the weights stay identical.
//
// Why averaging gives the single-process gradient. With a global batch of B examples split into
// N shards of B/N, the loss is the mean over the batch, L = (1/B) sum_i l_i. Rank r computes
// g_r = grad of (N/B) sum_{i in shard r} l_i (the mean over its own shard), and
//   (1/N) sum_r g_r = (1/B) sum_i grad l_i = grad L,
// exactly the gradient one process computes on the whole batch (up to float rounding, as the
// sums run in another order).
//
// Buckets and overlap. The gradients are cut into buckets (nn/dist/buckets.h) taken from the
// last layer backwards. A GradReadyHook (tensor/autograd/grad_ready.h) tells this class when
// backward has finished each parameter's gradient; when all of a bucket's are done, their values
// are copied into the bucket's slice of one flat buffer and a non-blocking allreduce of the slice
// starts, while backward goes on with the earlier layers. Buckets start strictly in plan order
// (MPI matches collectives by the order each rank starts them, so every rank must start the same
// ones in the same order); one that is ready before its predecessor waits for it. Each time a
// gradient is ready the collectives in flight are polled, which is what moves their bytes on a
// CPU (nn/dist/comm.h, "Progress"). Each rank sends g / N, so the sum is the mean. finish()
// starts whatever is left, waits for everything and points each parameter's .grad at its slice
// of the result (no copy back). With overlap off, nothing starts before backward has ended: the
// same buckets, one after the other, each a blocking allreduce, to show what overlapping buys.
// (A blocking allreduce runs MPI's tuned algorithms and the non-blocking one a generic library:
// on one machine, 1 MiB takes 154 us blocking and 293 us non-blocking here, so overlap must hide
// more than it costs.)
//
// Profile. Each bucket's start is an `allreduce` op (phase communication, its bytes in the cost;
// without overlap the whole blocking call), the scaled copy into the bucket a `bucket_copy` op,
// the final wait `allreduce_wait`, and each bucket's time in flight, from start to completion as
// this rank saw it, a collective span (profiler::record_collective): the communication track of
// the trace and the collectives table.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nn/dist/buckets.h"
#include "nn/dist/comm.h"
#include "tensor/autograd/grad_ready.h"
#include "tensor/tensor.h"

namespace prism::dist {

// A blocking allreduce (sum) recorded in the profile as an `allreduce` op of phase communication,
// and as a collective span: the step's loss, the buckets when overlap is off. float or double.
template <class T>
void allreduce_profiled(Comm& comm, T* data, int64_t n, const char* what);

struct DdpOptions {
  int64_t bucket_bytes = kDefaultBucketBytes;
  bool overlap = true;
};

// What the last step's synchronisation did (this rank's view).
struct SyncStats {
  int buckets = 0;
  int buckets_during_backward = 0;  // started before backward ended
  int64_t bytes = 0;                // gradient bytes allreduced
  int64_t wait_ns = 0;  // in finish(): from the end of backward to the averaged gradients
};

class GradSync {
 public:
  // The parameters in the model's registration order: float32, on the cpu, the same shapes on
  // every rank (the caller checks the configuration first).
  GradSync(Comm& comm, std::vector<Tensor> params, DdpOptions options);

  // Makes every rank's parameters rank 0's (a broadcast), before training starts.
  void broadcast_parameters();

  // Call around backward: the hook that starts buckets as their gradients finish (with overlap;
  // without, a hook that does nothing).
  std::unique_ptr<autograd::GradReadyHook> hook();
  // After backward: every bucket allreduced and averaged, each .grad the averaged gradient.
  void finish();

  // A 64-bit FNV-1a hash of every parameter's bytes: the same on every rank when the weights
  // are bit for bit the same; weights that differ collide with odds of about 2^-64.
  uint64_t weights_checksum() const;
  // Compares the checksums of all ranks (a collective: every rank calls it at the same step) and
  // throws an Error naming the ranks that differ from rank 0.
  void check_weights_identical(int64_t step) const;

  const std::vector<Bucket>& buckets() const { return buckets_; }
  const SyncStats& last_stats() const { return stats_; }

 private:
  void on_ready(const TensorImpl& leaf);
  void start_ready_buckets();  // in plan order, as far as they are complete
  void start_bucket(size_t b);
  void copy_into_bucket(size_t b);  // the bucket's gradients, divided by N, into flat_

  Comm& comm_;
  std::vector<Tensor> params_;
  DdpOptions options_;
  std::vector<Bucket> buckets_;
  std::vector<int> bucket_of_;       // parameter -> its bucket
  std::vector<int64_t> offset_of_;   // parameter -> its first element in flat_
  std::vector<int> pending_;         // per bucket: parameters not yet finished this step
  std::vector<Request> requests_;    // per bucket
  std::vector<int64_t> started_ns_;  // per bucket, when its allreduce started
  size_t next_to_start_ = 0;
  bool in_backward_ = false;
  Tensor flat_;  // every gradient, bucket after bucket, float32
  SyncStats stats_;
};

}  // namespace prism::dist
