// The alpha-beta (latency-bandwidth) model of a collective, and what it predicts for a
// data-parallel step. Pure arithmetic over measured times: no MPI here, so it is unit-tested
// exactly (tests/nn/alpha_beta_test.cpp) and `prism bench collectives` only feeds it numbers.
//
// The model (Hockney's): moving a message of m bytes costs
//   t(m) = alpha + m * beta,
// alpha the fixed cost of one collective (software, synchronisation, the first byte's latency:
// microseconds on one machine), beta the seconds per byte (1 / beta the bandwidth). Few bytes
// pay alpha, many bytes pay beta: a 4-byte and a 4-KiB allreduce cost about the same, a 64-MiB
// one is all bandwidth. Real collectives switch algorithms (eager to rendezvous, reduce-scatter
// + allgather) at certain sizes, so one line fits them only roughly: the fit reports its worst
// relative residual to say how roughly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace prism::dist {

struct AlphaBetaFit {
  double alpha_s = 0;  // seconds per collective
  double beta_s = 0;   // seconds per byte
  // max over the points of |fit(m_i) - t_i| / t_i, and the message size where it occurs.
  double worst_rel_residual = 0;
  double worst_bytes = 0;
  size_t n = 0;  // points fitted
  // Which limit the fit was held at, if the free line broke one (see fit_alpha_beta).
  enum class Constrained { none, alpha_zero, beta_zero };
  Constrained constrained = Constrained::none;

  double alpha_us() const { return alpha_s * 1e6; }
  // 1 / beta in GB/s (10^9 bytes per second); 0 when beta <= 0 (no bandwidth term fitted).
  double bandwidth_gbs() const { return beta_s > 0 ? 1e-9 / beta_s : 0; }
  // t(m) = alpha + m beta, in seconds.
  double time_s(double bytes) const { return alpha_s + bytes * beta_s; }
};

// Weighted least squares of t = alpha + m beta over (bytes, seconds), every point weighted by
// 1 / t_i^2, i.e. least squares in relative error (the math is in alpha_beta.cpp), with
// alpha >= 0 and beta >= 0: where noise tilts the free line below either, the best line on that
// limit (fit.constrained says which; beta held at 0 means the times did not grow with the size,
// so there is no bandwidth to report). At least two
// points, at least two distinct sizes, every size >= 0 and every time > 0 and finite; otherwise a
// prism::Error naming what was wrong.
AlphaBetaFit fit_alpha_beta(const std::vector<double>& bytes, const std::vector<double>& seconds);

// ---- a data-parallel step, predicted ----------------------------------------------------------
//
// One rank computes its local batch in compute_s (forward, backward, optimizer step); the
// gradients travel as buckets (nn/dist/buckets.h), each one allreduce costing alpha + bytes beta.
//   comm_s     = sum over buckets of (alpha + bytes_b beta)
//   no_overlap = compute_s + comm_s             every allreduce after backward
//   overlap    = max(compute_s + last_s, comm_s)
// The overlap bound: a bucket's allreduce may start once its gradients exist, so all but the
// last bucket can hide behind the rest of backward; the last bucket holds the first layers'
// gradients, which backward produces last, so its time always adds after the compute
// (compute_s + last_s). And the collectives run one after another, so the step is never shorter
// than comm_s either. It is a bound, not an estimate: on a CPU, Open MPI moves a non-blocking
// allreduce's bytes only when the rank polls it (nn/dist/comm.h), with the same core that runs
// backward, so the real step sits near the no-overlap figure. Both leave out the copies into the
// buckets and each step's wait for the slower rank: the MLP's measured step was 19% above the
// no-overlap figure, the CNN's 4% (docs/PERFORMANCE.md, "Data parallelism over MPI").
struct StepPrediction {
  double compute_s = 0;
  double comm_s = 0;
  double last_bucket_s = 0;
  double no_overlap_s = 0;
  double overlap_s = 0;
  int64_t gradient_bytes = 0;
  int buckets = 0;
};

// bucket_bytes: each bucket's size in bytes, in the order they are sent (the last one last).
// compute_s >= 0 and finite, at least one bucket, every size >= 0; otherwise a prism::Error.
StepPrediction predict_ddp_step(double compute_s, const std::vector<int64_t>& bucket_bytes,
                                const AlphaBetaFit& fit);

}  // namespace prism::dist
