#include "nn/dist/buckets.h"

#include "tensor/tensor.h"  // prism::Error

namespace prism::dist {

std::vector<Bucket> plan_buckets(const std::vector<int64_t>& numels, int64_t bucket_bytes,
                                 int64_t elem_size) {
  if (elem_size <= 0) throw Error("plan_buckets: element size must be positive");
  std::vector<Bucket> buckets;
  int64_t offset = 0;
  for (int i = static_cast<int>(numels.size()) - 1; i >= 0; --i) {
    const int64_t n = numels[static_cast<size_t>(i)];
    if (n < 0) throw Error("plan_buckets: parameter " + std::to_string(i) + " has a negative size");
    // A new bucket when there is none yet, or when this parameter would take a non-empty one
    // past bucket_bytes: no bucket exceeds it unless one parameter alone does.
    if (buckets.empty() || (bucket_bytes > 0 && buckets.back().numel > 0 &&
                            (buckets.back().numel + n) * elem_size > bucket_bytes)) {
      Bucket b;
      b.offset = offset;
      buckets.push_back(b);
    }
    buckets.back().params.push_back(i);
    buckets.back().numel += n;
    offset += n;
  }
  return buckets;
}

}  // namespace prism::dist
