#include "nn/dist/ddp.h"

#include <cstring>
#include <unordered_map>

#include "profiler/clock.h"
#include "profiler/collective.h"
#include "tensor/dispatch.h"
#include "tensor/ops.h"

namespace prism::dist {

namespace {

// The memory tracker's role for the flat gradient buffer.
Tensor make_flat(int64_t numel) {
  AllocRole role(MemRole::gradient);
  return zeros({numel});
}

}  // namespace

template <class T>
void allreduce_profiled(Comm& comm, T* data, int64_t n, const char* what) {
  profiler::PhaseGuard phase(profiler::Phase::communication);
  const int64_t t0 = profiler::now_ns();
  {
    detail::OpRecordScope rec("allreduce", "mpi", Device::cpu, {}, [&] {
      return profiler::allreduce_cost(n, comm.size(), static_cast<int64_t>(sizeof(T)));
    });
    comm.allreduce_sum(data, n, what);
  }
  profiler::record_collective("allreduce", t0, profiler::now_ns(),
                              n * static_cast<int64_t>(sizeof(T)), comm.size());
}
template void allreduce_profiled(Comm&, float*, int64_t, const char*);
template void allreduce_profiled(Comm&, double*, int64_t, const char*);

GradSync::GradSync(Comm& comm, std::vector<Tensor> params, DdpOptions options)
    : comm_(comm), params_(std::move(params)), options_(options) {
  std::vector<int64_t> numels;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    if (p.dtype() != DType::f32 || p.device() != Device::cpu) {
      throw Error("--ddp: parameter " + std::to_string(i) + " is " + dtype_name(p.dtype()) +
                  " on " + device_name(p.device()) +
                  "; data parallelism here averages float32 gradients on the cpu");
    }
    if (!p.is_contiguous()) {
      throw Error("--ddp: parameter " + std::to_string(i) + " " + p.shape().str() +
                  " is not contiguous; the broadcast and the buckets read parameters as flat "
                  "arrays");
    }
    numels.push_back(p.numel());
  }
  buckets_ = plan_buckets(numels, options_.bucket_bytes);
  bucket_of_.assign(params_.size(), -1);
  offset_of_.assign(params_.size(), 0);
  for (size_t b = 0; b < buckets_.size(); ++b) {
    int64_t off = buckets_[b].offset;
    for (int i : buckets_[b].params) {
      bucket_of_[static_cast<size_t>(i)] = static_cast<int>(b);
      offset_of_[static_cast<size_t>(i)] = off;
      off += numels[static_cast<size_t>(i)];
    }
  }
  int64_t total = 0;
  for (int64_t n : numels) total += n;
  flat_ = make_flat(total);
  requests_.resize(buckets_.size());
  started_ns_.assign(buckets_.size(), 0);
  pending_.assign(buckets_.size(), 0);
}

void GradSync::broadcast_parameters() {
  for (Tensor& p : params_) {
    comm_.broadcast(p.data<float>(), p.numel(), 0, "broadcast of the initial weights");
    p.bump_version();
  }
}

std::unique_ptr<autograd::GradReadyHook> GradSync::hook() {
  stats_ = SyncStats{};
  next_to_start_ = 0;
  for (size_t b = 0; b < buckets_.size(); ++b) {
    pending_[b] = static_cast<int>(buckets_[b].params.size());
  }
  in_backward_ = true;
  if (!options_.overlap) {
    return std::make_unique<autograd::GradReadyHook>([](const TensorImpl&) {});
  }
  return std::make_unique<autograd::GradReadyHook>(
      [this](const TensorImpl& leaf) { on_ready(leaf); });
}

void GradSync::on_ready(const TensorImpl& leaf) {
  // The parameters are few (tens to hundreds): a linear search by identity is cheaper than
  // keeping a map in step with them.
  for (size_t i = 0; i < params_.size(); ++i) {
    if (&params_[i].impl() != &leaf) continue;
    const int b = bucket_of_[i];
    if (--pending_[static_cast<size_t>(b)] == 0) start_ready_buckets();
    break;
  }
  // Poke the collectives in flight: on a CPU their bytes move only inside MPI calls.
  for (size_t b = 0; b < next_to_start_; ++b) {
    if (requests_[b].active() && comm_.poll(requests_[b])) {
      profiler::record_collective("allreduce", started_ns_[b], profiler::now_ns(),
                                  buckets_[b].numel * 4, comm_.size());
    }
  }
}

void GradSync::start_ready_buckets() {
  while (next_to_start_ < buckets_.size() && pending_[next_to_start_] == 0) {
    start_bucket(next_to_start_);
    ++next_to_start_;
  }
}

void GradSync::copy_into_bucket(size_t b) {
  const Bucket& bucket = buckets_[b];
  float* flat = flat_.data<float>();
  // g / N, so that the sum the allreduce makes is already the mean: one pass instead of a copy
  // and a later scaling pass. For N a power of two the division is exact (an exponent change),
  // so the result has the same bits as dividing the sum.
  const float inv = 1.0f / static_cast<float>(comm_.size());
  detail::OpRecordScope rec("bucket_copy", "", Device::cpu, {}, [&] {
    return profiler::Cost{bucket.numel, 0, 2 * bucket.numel * 4};  // a multiply, read and write
  });
  for (int i : bucket.params) {
    const Tensor& p = params_[static_cast<size_t>(i)];
    float* dst = flat + offset_of_[static_cast<size_t>(i)];
    const int64_t n = p.numel();
    const Tensor g = p.grad();
    if (!g.defined()) {
      std::memset(dst, 0, static_cast<size_t>(n) * sizeof(float));  // no gradient reached it
      continue;
    }
    const Tensor gc = g.contiguous();
    const float* src = gc.data<float>();
#pragma omp simd
    for (int64_t k = 0; k < n; ++k) dst[k] = src[k] * inv;
  }
}

void GradSync::start_bucket(size_t b) {
  const Bucket& bucket = buckets_[b];
  profiler::PhaseGuard phase(profiler::Phase::communication);
  copy_into_bucket(b);
  float* data = flat_.data<float>() + bucket.offset;
  ++stats_.buckets;
  if (in_backward_) ++stats_.buckets_during_backward;
  stats_.bytes += bucket.numel * 4;
  if (!options_.overlap) {
    // After backward, one bucket after the other: MPI's blocking allreduce (its fastest).
    allreduce_profiled(comm_, data, bucket.numel, "allreduce of a gradient bucket");
    return;
  }
  detail::OpRecordScope rec("allreduce", "mpi", Device::cpu, {}, [&] {
    return profiler::allreduce_cost(bucket.numel, comm_.size(), 4);
  });
  started_ns_[b] = profiler::now_ns();
  requests_[b] = comm_.start_allreduce_sum(data, bucket.numel, "allreduce of a gradient bucket");
}

void GradSync::finish() {
  in_backward_ = false;
  const int64_t t0 = profiler::now_ns();
  // Buckets not started during backward (all of them without overlap; with it, any whose
  // parameters the hook never reported, as a parameter no gradient reached): every one is
  // complete now.
  for (size_t b = next_to_start_; b < buckets_.size(); ++b) pending_[b] = 0;
  start_ready_buckets();
  bool in_flight = false;
  for (const Request& r : requests_) in_flight = in_flight || r.active();
  if (in_flight) {
    profiler::PhaseGuard phase(profiler::Phase::communication);
    detail::OpRecordScope rec("allreduce_wait", "mpi", Device::cpu, {},
                              [] { return profiler::Cost{}; });
    for (size_t b = 0; b < buckets_.size(); ++b) {
      if (!requests_[b].active()) continue;
      comm_.wait(requests_[b]);
      profiler::record_collective("allreduce", started_ns_[b], profiler::now_ns(),
                                  buckets_[b].numel * 4, comm_.size());
    }
  }
  stats_.wait_ns = profiler::now_ns() - t0;
  // The buckets now hold the mean (each rank sent g / N): each .grad becomes a view of its slice.
  flat_.bump_version();
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    const int64_t off = offset_of_[i];
    Tensor view = flat_.slice(0, off, off + p.numel()).reshape(p.shape());
    p.impl().grad = view.impl_ptr();
  }
}

uint64_t GradSync::weights_checksum() const {
  uint64_t h = 14695981039346656037ull;  // FNV-1a, 64-bit: the offset basis, then per byte
  for (const Tensor& p : params_) {
    const Tensor c = p.contiguous();
    const auto* bytes = reinterpret_cast<const unsigned char*>(c.data<float>());
    const size_t n = static_cast<size_t>(c.numel()) * sizeof(float);
    for (size_t i = 0; i < n; ++i) {
      h ^= bytes[i];
      h *= 1099511628211ull;
    }
  }
  return h;
}

void GradSync::check_weights_identical(int64_t step) const {
  const std::vector<uint64_t> all = comm_.allgather(weights_checksum(), "weight checksum");
  std::string differ;
  for (size_t r = 1; r < all.size(); ++r) {
    if (all[r] != all[0]) differ += (differ.empty() ? "" : ", ") + std::to_string(r);
  }
  if (!differ.empty()) {
    throw Error("--ddp: after step " + std::to_string(step) + " the weights of rank(s) " + differ +
                " differ from rank 0's (checksums of every parameter's bytes); the ranks no "
                "longer train the same model");
  }
}

}  // namespace prism::dist
