// Gradient buckets: which parameters' gradients travel together in one allreduce.
//
// One allreduce per parameter would pay the collective's latency (alpha, tens of microseconds
// on one machine, more across machines) once per tensor; one allreduce of everything would wait
// for the last gradient before sending anything. Buckets sit between: parameters are taken in
// the reverse of their registration order, which is about the order backward produces their
// gradients (the last layer's first), and cut into runs of at most `bucket_bytes`; a bucket is
// sent as soon as all its gradients exist, while backward goes on with the earlier layers
// (nn/dist/ddp.h). A parameter larger than a bucket gets one of its own.
//
// The plan depends on the sizes alone, so every rank makes the same one, and the step-time
// prediction of `prism bench collectives` plans the same buckets as training does.
#pragma once

#include <cstdint>
#include <vector>

namespace prism::dist {

// The default bucket: 1 MiB of float32 gradients (262,144 of them), used by `prism train --ddp`
// and planned with by `prism bench collectives --predict`. PyTorch's DDP takes 25 MB; prism's
// models are small (the MLP's gradients are 1.08 MB), and a bucket as large as the model would
// leave nothing to overlap: at 1 MiB the MLP's last layers (274 kB) travel while the first
// layer's weight gradient (803 kB) is computed. Large enough that the latency alpha (3 us between
// two ranks on one machine, docs/PERFORMANCE.md) is a small part of a full bucket's 200 us.
inline constexpr int64_t kDefaultBucketBytes = int64_t{1} << 20;

struct Bucket {
  std::vector<int> params;  // indices into the parameter list, in the order they were added
  int64_t offset = 0;       // the bucket's first element in the flat gradient buffer
  int64_t numel = 0;        // elements of all its parameters
};

// Buckets for parameters of these element counts (in registration order), each at most
// bucket_bytes (elem_size bytes an element; bucket_bytes <= 0: one bucket for everything).
// The buckets tile [0, sum of numels) of one flat buffer in the order they are sent.
std::vector<Bucket> plan_buckets(const std::vector<int64_t>& numels, int64_t bucket_bytes,
                                 int64_t elem_size = 4);

}  // namespace prism::dist
