// int8 post-training quantization of models (nn/quantized.h): per-channel weight scales,
// calibration, the quantized twin's predictions against the float model's, save/load, errors.
#include <algorithm>
#include <cmath>
#include <filesystem>

#include "nn/models/lenet.h"
#include "nn/models/mlp.h"
#include "nn/quantized.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/random.h"
#include "tests/nn/nn_test_util.h"

namespace prism::nn {
namespace {

using test::scratch_path;

double max_abs_diff(const Tensor& a, const Tensor& b) {
  double m = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double d = b.defined() ? a.data<float>()[i] - b.data<float>()[i] : a.data<float>()[i];
    m = std::max(m, std::abs(d));
  }
  return m;
}

int64_t agreement(const Tensor& a, const Tensor& b) {
  const Tensor pa = argmax(a, -1).contiguous(), pb = argmax(b, -1).contiguous();
  int64_t same = 0;
  for (int64_t i = 0; i < pa.numel(); ++i) same += pa.data<int64_t>()[i] == pb.data<int64_t>()[i];
  return same;
}

TEST_CASE("quantize_per_channel: scale_j = max|W_j| / 127 and q = round(W / scale_j), exact") {
  // Row 0: max 2.54 -> scale 0.02; row 1: max 0.127 -> scale 0.001; row 2: all zero -> scale 1.
  Tensor w = from_vector(std::vector<float>{2.54f, -1.f, 0.013f, 0.1f,     //
                                            0.f, 0.127f, -0.06f, 0.0004f,  //
                                            0.f, 0.f, 0.f, 0.f},
                         {3, 4});
  QuantizedWeight q = quantize_per_channel(w);
  REQUIRE(q.q.dtype() == DType::i8);
  CHECK(q.scale.data<float>()[0] == 2.54f / 127.f);
  CHECK(q.scale.data<float>()[1] == 0.127f / 127.f);
  CHECK(q.scale.data<float>()[2] == 1.f);
  // The largest |w| of each row maps to +-127 exactly, the others to the nearest step (no value
  // here is near a tie: -1 / 0.02 = -50, 0.013 / 0.02 = 0.65, -0.06 / 0.001 = -60, 0.4 -> 0).
  const std::vector<int> expect = {127, -50, 1, 5, 0, 127, -60, 0, 0, 0, 0, 0};
  for (size_t i = 0; i < expect.size(); ++i) {
    INFO("element " << i);
    CHECK(static_cast<int>(q.q.data<int8_t>()[i]) == expect[i]);
  }
}

TEST_CASE("RangeObserver: minmax takes the largest |x|, percentile the rank-ceil(p n) value") {
  RangeObserver r;
  std::vector<float> v(1000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = (i % 2 ? -1.f : 1.f) * static_cast<float>(i + 1);
  r.observe(from_vector(v, {10, 100}));
  CHECK(r.count() == 1000);
  CHECK(r.scale({CalibrationMethod::minmax, 99.99}) == 1000.f / 127.f);
  // 99% of 1000 magnitudes 1..1000: the 990th smallest, 990.
  CHECK(r.scale({CalibrationMethod::percentile, 99.0}) == 990.f / 127.f);
  // Without the values (minmax calibration keeps only the maximum) the percentile is refused.
  RangeObserver max_only(false);
  max_only.observe(from_vector(v, {1000}));
  CHECK(max_only.count() == 1000);
  CHECK(max_only.scale({CalibrationMethod::minmax, 99.99}) == 1000.f / 127.f);
  CHECK_ERROR("needs the values", max_only.scale({CalibrationMethod::percentile, 99.0}));
  RangeObserver zero;
  zero.observe(zeros({4}));
  CHECK(zero.scale({}) == 1.f);
}

TEST_CASE("quantized MLP: keeps the float model's argmax on >= 95% of a batch, close logits") {
  manual_seed(3);
  MLP mlp({32, 64, 48, 10});
  std::vector<Tensor> calib;
  for (int i = 0; i < 4; ++i) calib.push_back(randn({32, 32}));
  auto q = quantize_model(mlp, calib, {});
  Tensor x = randn({256, 32});
  Tensor y, yq;
  {
    NoGrad no_grad;
    y = mlp(x);
    yq = (*q)(x);
  }
  REQUIRE(yq.shape() == y.shape());
  // 8-bit weights and activations: a relative error of about 1% on the logits, so only near
  // ties between the top two classes can flip. Threshold: 95% of 256 (measured: 249, 97%).
  const int64_t same = agreement(y, yq);
  MESSAGE("int8 MLP agrees with fp32 on " << same << " of 256");
  CHECK(same >= 243);
  CHECK(max_abs_diff(y, yq) < 0.05 * max_abs_diff(y, Tensor()));
  // Weight bytes: int8 weights + float32 scales, biases and input scales.
  const int64_t expect_bytes = (32 * 64 + 64 * 48 + 48 * 10) + 4 * (64 + 48 + 10) * 2 + 4 * 3;
  CHECK(q->weight_bytes() == expect_bytes);
  CHECK(parameter_bytes(mlp) == 4 * mlp.parameter_count());
}

TEST_CASE("quantized LeNet: conv via int8 im2col agrees with the float model") {
  manual_seed(5);
  LeNet net(1, 12, 10, 4);
  std::vector<Tensor> calib = {randn({16, 1, 12, 12}), randn({16, 1, 12, 12})};
  for (auto method : {CalibrationMethod::minmax, CalibrationMethod::percentile}) {
    auto q = quantize_model(net, calib, {method, 99.9});
    Tensor x = randn({64, 1, 12, 12});
    NoGrad no_grad;
    Tensor y = net(x), yq = (*q)(x);
    REQUIRE(yq.shape() == y.shape());
    const int64_t same = agreement(y, yq);
    MESSAGE(std::string(calibration_method_name(method))
            << ": int8 LeNet agrees on " << same << " of 64");
    CHECK(same >= 58);  // 90%
  }
}

TEST_CASE("QuantizedConv2d: padding and stride, close to the float conv on an odd shape") {
  manual_seed(11);
  Conv2d conv(3, 5, 3, /*stride=*/2, /*padding=*/1);
  Tensor x = randn({2, 3, 7, 9});
  RangeObserver r;
  r.observe(x);
  QuantizedConv2d q(conv, r.scale({}));
  NoGrad no_grad;
  Tensor y = conv(x), yq = q(x);
  REQUIRE(yq.shape() == y.shape());  // [2, 5, 4, 5]
  // 8-bit steps on inputs (|x| max / 127) and weights: errors of about 1% of the output range.
  CHECK(max_abs_diff(y, yq) < 0.03 * max_abs_diff(y, Tensor()));
}

TEST_CASE("save_quantized / load_quantized: a round trip gives the same outputs bit for bit") {
  manual_seed(7);
  MLP mlp({16, 24, 5});
  auto q = quantize_model(mlp, {randn({8, 16})}, {CalibrationMethod::percentile, 99.0});
  const std::string path = scratch_path("quantized_mlp.safetensors");
  save_quantized(*q, path, {{"prism.model", "mlp"}});
  Metadata meta;
  MLP fresh({16, 24, 5});  // other float weights: the file must supply every int8 tensor
  auto back = load_quantized(fresh, path, &meta);
  CHECK(meta["prism.quantized"] == "int8");
  CHECK(meta["prism.model"] == "mlp");
  const NamedTensors stored = read_safetensors(path);
  bool saw_i8 = false;
  for (const auto& [name, t] : stored)
    saw_i8 = saw_i8 || (name == "fc1.weight_q" && t.dtype() == DType::i8);
  CHECK(saw_i8);
  Tensor x = randn({9, 16});
  NoGrad no_grad;
  Tensor a = (*q)(x), b = (*back)(x);
  for (int64_t i = 0; i < a.numel(); ++i) CHECK(a.data<float>()[i] == b.data<float>()[i]);
  std::filesystem::remove(path);
}

TEST_CASE("quantization errors: wrong model, wrong file, bad percentile") {
  manual_seed(9);
  MLP mlp({8, 4});
  CHECK_ERROR("percentile must be in (0, 100]",
              quantize_model(mlp, {randn({2, 8})}, {CalibrationMethod::percentile, 0}));
  CHECK_ERROR("unknown calibration method 'mean'", parse_calibration_method("mean"));
  Linear lone(3, 2);
  CHECK_ERROR("only the sequential models", quantize_model(lone, {}, {}));
  // A float checkpoint is not an int8 file.
  const std::string path = scratch_path("float_mlp.safetensors");
  save_safetensors(mlp, path);
  CHECK_ERROR("is not an int8 model", load_quantized(mlp, path));
  // An int8 file of another architecture does not fit.
  auto q = quantize_model(mlp, {randn({2, 8})}, {});
  save_quantized(*q, path, {});
  MLP other({8, 6, 4});
  CHECK_THROWS_AS(load_quantized(other, path), Error);
  std::filesystem::remove(path);
  CHECK_THROWS_AS(load_quantized(mlp, path), Error);  // missing file
}

}  // namespace
}  // namespace prism::nn
