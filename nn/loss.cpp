#include "nn/loss.h"

#include <string>

#include "tensor/ops.h"

namespace prism::nn {

namespace {

void check_float(const char* loss, const char* what, const Tensor& t) {
  if (!t.defined()) throw Error(std::string(loss) + ": " + what + " is undefined");
  if (t.dtype() == DType::i64) {
    throw Error(std::string(loss) + ": " + what + " must be float32 or float64, got int64 " +
                t.shape().str());
  }
}

Tensor reduce(const Tensor& per_item, Reduction r) {
  return r == Reduction::mean ? mean(per_item) : sum(per_item);
}

// Checks [N, C] scores against int64 labels [N] with every label in [0, C).
void check_classification(const char* loss, const Tensor& scores, const Tensor& labels) {
  check_float(loss, "input", scores);
  if (scores.dim() != 2) {
    throw Error(std::string(loss) + ": input must be [N, C], got " + scores.shape().str());
  }
  if (!labels.defined() || labels.dtype() != DType::i64) {
    throw Error(std::string(loss) + ": labels must be int64, got " +
                (labels.defined() ? std::string(dtype_name(labels.dtype())) : "undefined"));
  }
  if (labels.dim() != 1 || labels.size(0) != scores.size(0)) {
    throw Error(std::string(loss) + ": labels must be [N] = [" + std::to_string(scores.size(0)) +
                "] for input " + scores.shape().str() + ", got " + labels.shape().str());
  }
  if (scores.size(0) == 0) throw Error(std::string(loss) + ": empty batch");
  if (labels.device() != Device::cpu) return;  // values unreadable here (meta); the op checks
  const int64_t c = scores.size(1);
  const Tensor l = labels.contiguous();
  const int64_t* p = l.data<int64_t>();
  for (int64_t i = 0; i < l.numel(); ++i) {
    if (p[i] < 0 || p[i] >= c) {
      throw Error(std::string(loss) + ": label " + std::to_string(p[i]) + " at position " +
                  std::to_string(i) + " is out of range [0, " + std::to_string(c) + ")");
    }
  }
}

}  // namespace

Tensor mse_loss(const Tensor& pred, const Tensor& target, Reduction reduction) {
  check_float("mse_loss", "prediction", pred);
  check_float("mse_loss", "target", target);
  // Equal shapes, not broadcastable ones: [N, 1] against [N] would silently broadcast to
  // [N, N] and compute the wrong loss.
  if (!(pred.shape() == target.shape())) {
    throw Error("mse_loss: prediction " + pred.shape().str() + " and target " +
                target.shape().str() + " must have the same shape");
  }
  if (pred.dtype() != target.dtype()) {
    throw Error(std::string("mse_loss: prediction is ") + dtype_name(pred.dtype()) +
                ", target is " + dtype_name(target.dtype()));
  }
  Tensor diff = pred - target;
  return reduce(diff * diff, reduction);
}

Tensor nll_loss(const Tensor& log_probs, const Tensor& labels, Reduction reduction) {
  check_classification("nll_loss", log_probs, labels);
  // picked[i] = log_probs[i, labels[i]]: gather along dim 1 with a [N, 1] index.
  Tensor picked = gather(log_probs, 1, labels.unsqueeze(1));
  return -reduce(picked, reduction);
}

}  // namespace prism::nn
