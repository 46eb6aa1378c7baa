#include "nn/quantized.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "nn/layers/activation.h"
#include "nn/layers/flatten.h"
#include "nn/layers/pool.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/ops.h"
#include "tensor/quantized_ops.h"

namespace prism::nn {

namespace {

// printf-style formatting into a std::string (nn/ does not link fmt).
template <class... Ts>
std::string format(const char* f, Ts... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, args...);
  return buf;
}

std::string S(int64_t v) {
  return std::to_string(v);
}

// The same rule as the quantize kernel: round half to even, saturate to [-127, 127].
int8_t quantize_value(float x, float scale) {
  const float q = std::nearbyint(x / scale);
  return q >= 127.f ? int8_t{127} : q <= -127.f ? int8_t{-127} : static_cast<int8_t>(q);
}

Tensor scalar_buffer(float v) {
  Tensor t = empty({1}, DType::f32);
  t.data<float>()[0] = v;
  return t;
}

void check_input_scale(const char* layer, float s) {
  if (!(s > 0) || !std::isfinite(s)) {
    throw Error(format("%s: the input scale must be finite and > 0, got %g", layer,
                       static_cast<double>(s)));
  }
}

// im2col on int8: row (b, i, j) of `cols` holds the C k k inputs that output pixel (i, j) of
// image b reads, in the weight's order (c, u, v); padding reads 0, exactly 0 in a symmetric grid.
// A quarter of the bytes a float32 im2col moves. Plain arguments: a store through an int8_t
// pointer may alias anything, so members read in the loop would be reloaded at every element.
void im2col_int8(const int8_t* src, int64_t n, int64_t c_in, int64_t h, int64_t w, int64_t k,
                 int64_t stride, int64_t pad, int64_t ho, int64_t wo, int8_t* dst) {
  const int64_t depth = c_in * k * k;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t i = 0; i < ho; ++i) {
      for (int64_t j = 0; j < wo; ++j) {
        int8_t* row = dst + ((b * ho + i) * wo + j) * depth;
        for (int64_t c = 0; c < c_in; ++c) {
          const int8_t* plane = src + (b * c_in + c) * h * w;
          const int64_t x0 = j * stride - pad;
          for (int64_t u = 0; u < k; ++u) {
            const int64_t y = i * stride + u - pad;
            int8_t* to = row + (c * k + u) * k;
            if (y >= 0 && y < h && x0 >= 0 && x0 + k <= w) {  // the window's row is all inside
              const int8_t* from = plane + y * w + x0;
              for (int64_t v = 0; v < k; ++v) to[v] = from[v];
              continue;
            }
            for (int64_t v = 0; v < k; ++v) {
              const int64_t x = x0 + v;
              const bool inside = y >= 0 && y < h && x >= 0 && x < w;
              to[v] = inside ? plane[y * w + x] : int8_t{0};
            }
          }
        }
      }
    }
  }
}

}  // namespace

// ---- weights -------------------------------------------------------------------------------
QuantizedWeight quantize_per_channel(const Tensor& weight) {
  if (weight.dtype() != DType::f32 || weight.dim() < 2) {
    throw Error("quantize_per_channel: expects a float32 weight [out, ...], got " +
                std::string(dtype_name(weight.dtype())) + " " + weight.shape().str());
  }
  const Tensor w = weight.detach().to(Device::cpu).contiguous();
  const int64_t out = w.size(0), per = w.numel() / std::max<int64_t>(out, 1);
  QuantizedWeight r{empty(w.shape(), DType::i8), empty({out}, DType::f32)};
  const float* src = w.data<float>();
  int8_t* q = r.q.data<int8_t>();
  for (int64_t j = 0; j < out; ++j) {
    float m = 0;
    for (int64_t p = 0; p < per; ++p) m = std::max(m, std::abs(src[j * per + p]));
    const float scale = m > 0 ? m / 127.f : 1.f;
    r.scale.data<float>()[j] = scale;
    for (int64_t p = 0; p < per; ++p) q[j * per + p] = quantize_value(src[j * per + p], scale);
  }
  return r;
}

// ---- calibration ---------------------------------------------------------------------------
CalibrationMethod parse_calibration_method(const std::string& name) {
  if (name == "minmax") return CalibrationMethod::minmax;
  if (name == "percentile") return CalibrationMethod::percentile;
  throw Error("quantize: unknown calibration method '" + name + "' (minmax, percentile)");
}

const char* calibration_method_name(CalibrationMethod m) {
  return m == CalibrationMethod::minmax ? "minmax" : "percentile";
}

void RangeObserver::observe(const Tensor& x) {
  const Tensor c = x.detach().to(Device::cpu).contiguous();
  const float* p = c.data<float>();
  count_ += c.numel();
  const size_t at = abs_.size();
  if (keep_) abs_.resize(at + static_cast<size_t>(c.numel()));
  for (int64_t i = 0; i < c.numel(); ++i) {
    const float a = std::abs(p[i]);
    max_ = std::max(max_, a);
    if (keep_) abs_[at + static_cast<size_t>(i)] = a;
  }
}

float RangeObserver::scale(const CalibrationOptions& o) const {
  float r = max_;
  if (o.method == CalibrationMethod::percentile && !keep_) {
    throw Error("RangeObserver: the percentile needs the values, observed with keep_values off");
  }
  if (o.method == CalibrationMethod::percentile && !abs_.empty()) {
    // The value below which p % of the magnitudes lie: the element of rank ceil(p/100 n) - 1.
    std::vector<float> v = abs_;
    const double rank = std::ceil(o.percentile / 100.0 * static_cast<double>(v.size())) - 1;
    const size_t k = static_cast<size_t>(std::clamp(rank, 0.0, static_cast<double>(v.size() - 1)));
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
    r = v[k];
  }
  return r > 0 ? r / 127.f : 1.f;
}

// ---- layers --------------------------------------------------------------------------------
QuantizedLinear::QuantizedLinear(const Linear& fp, float input_scale)
    : in_(fp.in_features()), out_(fp.out_features()), relu_input_(fp.options().relu_input) {
  check_input_scale("QuantizedLinear", input_scale);
  QuantizedWeight w = quantize_per_channel(fp.weight);
  weight_q = register_buffer("weight_q", w.q);
  weight_scale = register_buffer("weight_scale", w.scale);
  if (fp.bias.defined()) {
    bias = register_buffer("bias", fp.bias.detach().to(Device::cpu).contiguous().clone());
  }
  input_scale_t = register_buffer("input_scale", scalar_buffer(input_scale));
}

float QuantizedLinear::input_scale() const {
  return input_scale_t.data<float>()[0];
}

std::string QuantizedLinear::extra_repr() const {
  return format("in=%lld, out=%lld, bias=%s, input_scale=%.4g%s", static_cast<long long>(in_),
                static_cast<long long>(out_), bias.defined() ? "true" : "false",
                static_cast<double>(input_scale()), relu_input_ ? ", relu_input=true" : "");
}

Tensor QuantizedLinear::forward(const Tensor& x) {
  if (x.dim() == 0 || x.size(-1) != in_) {
    throw Error("QuantizedLinear(" + extra_repr() + "): input " + x.shape().str() +
                " must end in " + S(in_) + " features");
  }
  const float s = input_scale();
  const Tensor x2 = x.reshape({-1, in_});
  Tensor q = quantize(relu_input_ ? relu(x2) : x2, s);
  Tensor y = matmul_int8(q, s, weight_q, weight_scale, bias);
  Dims shape = x.shape();
  shape[shape.size() - 1] = out_;
  return y.reshape(shape);
}

QuantizedConv2d::QuantizedConv2d(const Conv2d& fp, float input_scale)
    : in_(fp.weight.size(1)),
      out_(fp.weight.size(0)),
      kernel_(fp.kernel_size()),
      stride_(fp.stride()),
      padding_(fp.padding()) {
  check_input_scale("QuantizedConv2d", input_scale);
  QuantizedWeight w = quantize_per_channel(fp.weight);
  weight_q = register_buffer("weight_q", w.q);
  weight_scale = register_buffer("weight_scale", w.scale);
  if (fp.bias.defined()) {
    bias = register_buffer("bias", fp.bias.detach().to(Device::cpu).contiguous().clone());
  }
  input_scale_t = register_buffer("input_scale", scalar_buffer(input_scale));
}

float QuantizedConv2d::input_scale() const {
  return input_scale_t.data<float>()[0];
}

std::string QuantizedConv2d::extra_repr() const {
  return format("%lld, %lld, kernel_size=%d, stride=%d, padding=%d, input_scale=%.4g",
                static_cast<long long>(in_), static_cast<long long>(out_), kernel_, stride_,
                padding_, static_cast<double>(input_scale()));
}

Tensor QuantizedConv2d::forward(const Tensor& x) {
  if (x.dim() != 4 || x.size(1) != in_ || x.size(2) + 2 * padding_ < kernel_ ||
      x.size(3) + 2 * padding_ < kernel_) {
    throw Error("QuantizedConv2d(" + extra_repr() + "): input " + x.shape().str() +
                " must be [N, " + S(in_) + ", H, W] with H, W >= " + S(kernel_ - 2 * padding_));
  }
  const float s = input_scale();
  const Tensor q = quantize(x, s);  // int8 [N, C, H, W], contiguous
  const int64_t n = x.size(0), h = x.size(2), w = x.size(3), k = kernel_;
  const int64_t ho = (h + 2 * padding_ - k) / stride_ + 1,
                wo = (w + 2 * padding_ - k) / stride_ + 1;
  const int64_t depth = in_ * k * k;
  // (A data rearrangement inside the layer, not an op of its own: its time shows as the
  // layer's self time in a profile.)
  Tensor cols = empty({n * ho * wo, depth}, DType::i8);
  im2col_int8(q.data<int8_t>(), n, in_, h, w, k, stride_, padding_, ho, wo, cols.data<int8_t>());
  Tensor out = matmul_int8(cols, s, weight_q.reshape({out_, depth}), weight_scale, bias);
  // [N Ho Wo, O] -> [N, O, Ho, Wo]
  return out.reshape({n, ho, wo, out_}).permute({0, 3, 1, 2}).contiguous();
}

// ---- the twin ------------------------------------------------------------------------------
Tensor QuantizedModel::forward(const Tensor& x) {
  Tensor h = x;
  for (auto& s : stages_) h = (*s)(h);
  return h;
}

int64_t QuantizedModel::weight_bytes() const {
  int64_t total = 0;
  for (const auto& [name, t] : named_buffers()) total += t.nbytes();
  return total;
}

int64_t parameter_bytes(const Module& model) {
  int64_t total = 0;
  for (const auto& [name, t] : model.named_parameters()) total += t.nbytes();
  return total;
}

std::shared_ptr<QuantizedModel> quantize_model(Module& model, const std::vector<Tensor>& batches,
                                               const CalibrationOptions& options) {
  const std::string type = model.type_name();
  if (type != "MLP" && type != "LeNet") {
    throw Error(
        "quantize: only the sequential models can be converted (mlp: MLP, cnn: LeNet), "
        "got a " +
        type);
  }
  if (options.method == CalibrationMethod::percentile &&
      !(options.percentile > 0 && options.percentile <= 100)) {
    throw Error(format("quantize: the percentile must be in (0, 100], got %g", options.percentile));
  }
  for (const auto& [name, p] : model.named_parameters()) {
    if (p.dtype() != DType::f32) {
      throw Error("quantize: expects a float32 model, parameter " + name + " is " +
                  dtype_name(p.dtype()));
    }
  }
  model.eval();
  const auto children = model.named_children();
  for (const auto& [name, child] : children) {
    const std::string t = child->type_name();
    if (t != "Linear" && t != "Conv2d" && t != "ReLU" && t != "MaxPool2d" && t != "Flatten") {
      throw Error("quantize: cannot convert layer " + name + " (" + t +
                  "): supports Linear, Conv2d, ReLU, MaxPool2d and Flatten");
    }
  }
  // Calibration: run the float32 layers in order, recording each Linear / Conv2d input.
  std::vector<RangeObserver> observers(
      children.size(), RangeObserver(options.method == CalibrationMethod::percentile));
  {
    NoGrad no_grad;
    for (const Tensor& batch : batches) {
      Tensor h = batch;
      for (size_t i = 0; i < children.size(); ++i) {
        const std::string t = children[i].second->type_name();
        // What the layer quantizes: its input, after the ReLU it folds in (LinearOptions).
        const auto* l = dynamic_cast<const Linear*>(children[i].second.get());
        if (l && l->options().relu_input) {
          observers[i].observe(relu(h));
        } else if (t == "Linear" || t == "Conv2d") {
          observers[i].observe(h);
        }
        h = (*children[i].second)(h);
      }
    }
  }
  auto q = std::make_shared<QuantizedModel>();
  q->source_type_ = type;
  for (size_t i = 0; i < children.size(); ++i) {
    const auto& [name, child] = children[i];
    const float s = batches.empty() ? 1.f : observers[i].scale(options);
    std::shared_ptr<Module> stage;
    if (auto* l = dynamic_cast<Linear*>(child.get())) {
      stage = std::make_shared<QuantizedLinear>(*l, s);
    } else if (auto* c = dynamic_cast<Conv2d*>(child.get())) {
      stage = std::make_shared<QuantizedConv2d>(*c, s);
    } else {
      stage = child;  // ReLU, MaxPool2d, Flatten: the same computation in float
    }
    q->stages_.push_back(q->register_module(name, stage));
  }
  q->eval();
  return q;
}

void save_quantized(const QuantizedModel& q, const std::string& path, Metadata metadata) {
  metadata["prism.quantized"] = "int8";
  metadata["prism.quantized.scheme"] =
      "weights: per-output-channel symmetric int8 (scale = max|W_j| / 127); activations: one "
      "symmetric int8 scale per layer input; int32 accumulation; float32 between layers";
  save_safetensors(q, path, metadata);
}

std::shared_ptr<QuantizedModel> load_quantized(Module& model, const std::string& path,
                                               Metadata* metadata) {
  Metadata meta;
  read_safetensors(path, &meta);  // a missing or malformed file is an Error naming it
  const auto it = meta.find("prism.quantized");
  if (it == meta.end() || it->second != "int8") {
    throw Error("load_quantized: " + path +
                " is not an int8 model (no prism.quantized = int8 in its metadata): make one "
                "with `prism quantize`");
  }
  auto q = quantize_model(model, {}, {});
  load_safetensors(*q, path, /*strict=*/true);
  // Scales divide and multiply every value: a zero, negative or non-finite one (a tampered
  // file; quantize_weights never writes one: an all-zero channel gets 1) is refused, per element.
  auto ends_with = [](const std::string& name, const std::string& tail) {
    return name.size() > tail.size() &&
           name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
  };
  for (const auto& [name, t] : q->named_buffers()) {
    if (ends_with(name, ".input_scale")) check_input_scale(name.c_str(), t.data<float>()[0]);
    if (ends_with(name, ".weight_scale")) {
      const float* s = t.data<float>();
      for (int64_t j = 0; j < t.numel(); ++j) {
        if (!(s[j] > 0) || !std::isfinite(s[j])) {
          throw Error(format("load_quantized: %s: %s[%lld] must be finite and > 0, got %g",
                             path.c_str(), name.c_str(), static_cast<long long>(j),
                             static_cast<double>(s[j])));
        }
      }
    }
  }
  if (metadata) *metadata = meta;
  return q;
}

}  // namespace prism::nn
