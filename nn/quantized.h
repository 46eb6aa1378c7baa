// int8 post-training quantization: a trained float32 model's inference twin with int8 weights
// and int8 activations into every Linear and Conv2d.
//
// Weights: per output channel, symmetric. Row j of a weight (one output channel; for a conv
// its C kh kw values) gets scale_j = max_p |W[j][p]| / 127 and q[j][p] = round(W[j][p] /
// scale_j), so the largest value of each row maps to +-127 exactly and a channel with small
// weights keeps its own resolution (one scale for the whole tensor would crush it). An all-zero
// row gets scale 1 (its q are 0 whatever the scale).
//
// Activations: one symmetric scale per layer input, s = r / 127, where r is the range seen over
// a calibration pass (N batches through the float32 model):
//   minmax      r = the largest |x| seen: nothing saturates on the calibration data, but one
//               outlier stretches the grid for every other value;
//   percentile  r = the p-th percentile of |x| (p = 99.99 by default): the rare values above
//               saturate to +-127, every other value gets a finer grid.
// At inference the layer quantizes its input with s (the quantize op), runs the int8 GEMM
// (matmul_int8: int32 accumulation, then out = acc s scale_j + b_j fused), and hands float32 to
// the next layer. Dequantizing to float between layers (rather than requantizing to int8 inside
// the GEMM) keeps ReLU, max pooling and the logits in float, where they are exact, and lets each
// layer be converted on its own; the price is 4 bytes per activation between layers instead of 1.
//
// Files: save_quantized writes the twin's buffers (<layer>.weight_q I8, <layer>.weight_scale F32,
// <layer>.bias F32, <layer>.input_scale F32) with metadata prism.quantized = int8,
// prism.model, prism.calibration (method, percentile, batches). load_quantized rebuilds the
// twin over a float32 model of the same architecture and fills it from the file.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nn/layers/conv.h"
#include "nn/layers/linear.h"
#include "nn/module.h"
#include "nn/safetensors.h"

namespace prism::nn {

// Per-output-channel symmetric quantization of a weight [out, ...]: q int8 of the same shape,
// scale float32 [out] (scale_j = max|W_j| / 127, 1 for an all-zero row).
struct QuantizedWeight {
  Tensor q;
  Tensor scale;
};
QuantizedWeight quantize_per_channel(const Tensor& weight);

enum class CalibrationMethod { minmax, percentile };
CalibrationMethod parse_calibration_method(const std::string& name);  // "minmax", "percentile"
const char* calibration_method_name(CalibrationMethod m);

struct CalibrationOptions {
  CalibrationMethod method = CalibrationMethod::minmax;
  double percentile = 99.99;  // in (0, 100], for CalibrationMethod::percentile
};

// Collects the magnitudes a layer's input takes during calibration.
class RangeObserver {
 public:
  // keep_values: keep every |x| seen (4 bytes each), which the percentile needs; minmax only
  // needs the running maximum.
  explicit RangeObserver(bool keep_values = true) : keep_(keep_values) {}
  void observe(const Tensor& x);
  // r / 127 for the method (see the top of this file); an input that was always 0 gets 1.
  float scale(const CalibrationOptions& o) const;
  int64_t count() const { return count_; }

 private:
  bool keep_;
  std::vector<float> abs_;  // every |x| seen, when keep_ (the percentile needs them all)
  float max_ = 0;
  int64_t count_ = 0;
};

class QuantizedLinear : public Module {
 public:
  QuantizedLinear(const Linear& fp, float input_scale);
  Tensor forward(const Tensor& x) override;  // float [..., in] -> float [..., out]
  std::string type_name() const override { return "QuantizedLinear"; }
  std::string extra_repr() const override;
  float input_scale() const;
  Tensor weight_q, weight_scale, bias, input_scale_t;  // buffers (bias undefined without one)

 private:
  int64_t in_, out_;
  bool relu_input_;  // the float layer's ReLU on its input (LinearOptions), applied before quantize
};

class QuantizedConv2d : public Module {
 public:
  QuantizedConv2d(const Conv2d& fp, float input_scale);
  // float [N, C, H, W] -> float [N, O, Ho, Wo]: quantize, im2col on int8, matmul_int8.
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "QuantizedConv2d"; }
  std::string extra_repr() const override;
  float input_scale() const;
  Tensor weight_q, weight_scale, bias, input_scale_t;

 private:
  int64_t in_, out_;
  int kernel_, stride_, padding_;
};

// The quantized twin of a sequential model (MLP, LeNet: forward calls the children in order):
// Linear and Conv2d become their quantized versions, ReLU, MaxPool2d and Flatten run as they
// are (shared with the float32 model).
class QuantizedModel : public Module {
 public:
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "QuantizedModel"; }
  std::string extra_repr() const override { return source_type_; }
  // Bytes of the weights as stored: int8 weights + float32 scales and biases (input scales
  // included), against the float32 model's parameters.
  int64_t weight_bytes() const;

 private:
  friend std::shared_ptr<QuantizedModel> quantize_model(Module&, const std::vector<Tensor>&,
                                                        const CalibrationOptions&);
  std::string source_type_;
  std::vector<std::shared_ptr<Module>> stages_;
};

// Calibrates `model` (float32, a sequential MLP or LeNet) on `batches` (each a model input) and
// returns its twin. No batches: every input scale is 1 (the structure alone, for load_quantized
// to fill). The model is put in eval mode. Errors: another kind of model, a layer the twin
// cannot convert, a percentile outside (0, 100].
std::shared_ptr<QuantizedModel> quantize_model(Module& model, const std::vector<Tensor>& batches,
                                               const CalibrationOptions& options);

// Writes the twin atomically (a temporary file renamed over `path`: never half a file). The
// metadata gets prism.quantized = "int8" and whatever `metadata` adds (prism.model,
// prism.calibration).
void save_quantized(const QuantizedModel& q, const std::string& path, Metadata metadata);
// Reads a file save_quantized wrote into the twin of `model` (same architecture): an Error if
// it is not an int8 file or does not fit. `metadata`, when given, receives the file's.
std::shared_ptr<QuantizedModel> load_quantized(Module& model, const std::string& path,
                                               Metadata* metadata = nullptr);

// Bytes of a float model's parameters at their element size.
int64_t parameter_bytes(const Module& model);

}  // namespace prism::nn
