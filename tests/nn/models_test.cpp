// The model zoo (nn/models/): parameter counts against formulas worked out by hand and against
// the published figures, output shapes, the FLOPs a profiling session records for a forward
// pass against the per-op conventions of docs/COSTS.md, a GPT that learns, its sampling, and
// the registry. Anything large is built on the meta device: shapes and costs, no memory, no
// arithmetic, so the whole file runs in seconds.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "nn/loss.h"
#include "nn/models/gpt.h"
#include "nn/models/lenet.h"
#include "nn/models/mlp.h"
#include "nn/models/resnet.h"
#include "nn/models/zoo.h"
#include "nn/optim/adam.h"
#include "profiler/session.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/ops.h"
#include "tensor/random.h"
#include "tests/nn/nn_test_util.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace {

using prism::DefaultDevice;
using prism::Device;
using prism::Dims;
using prism::DType;
using prism::Error;
using prism::Tensor;
using prism::profiler::Kind;
using prism::profiler::OpRecord;
using prism::profiler::Session;
namespace nn = prism::nn;
using prism::nn::test::OneThread;

// What a profile adds up to, in total and per op name (op records only: module scopes are
// records too, with no cost).
struct Totals {
  int64_t flops = 0;
  int64_t macs = 0;
  std::map<std::string, int64_t> flops_by_op;
  std::map<std::string, int> calls_by_op;
};

Totals totals(const prism::profiler::Profile& p) {
  Totals t;
  for (const OpRecord& r : p.recording.records) {
    if (r.kind != Kind::op) continue;
    t.flops += r.cost.flops;
    t.macs += r.cost.macs;
    t.flops_by_op[r.op] += r.cost.flops;
    t.calls_by_op[r.op] += 1;
  }
  return t;
}

// Runs one forward pass inside a profiling session and returns what it recorded.
Totals profile_forward(nn::Module& model, const Tensor& x, Dims* out_shape = nullptr) {
  Session session;
  Tensor y = model(x);
  const Totals t = totals(session.stop());
  if (out_shape) *out_shape = y.shape();
  return t;
}

int64_t buffer_count(const nn::Module& m) {
  int64_t n = 0;
  for (const Tensor& b : m.buffers()) n += b.numel();
  return n;
}

// ---- parameter formulas, by hand (the layers' headers give each layer's count) --------------

int64_t linear_params(int64_t in, int64_t out) {
  return in * out + out;
}
int64_t conv_params(int64_t in, int64_t out, int64_t k, bool bias) {
  return out * in * k * k + (bias ? out : 0);
}
int64_t bn_params(int64_t c) {
  return 2 * c;
}  // weight and bias; running stats are buffers

// A basic block: two 3x3 convs + two BNs, and a 1x1 conv + BN projection when the shape changes.
int64_t basic_block_params(int64_t in, int64_t planes, int stride) {
  int64_t n = conv_params(in, planes, 3, false) + bn_params(planes) +
              conv_params(planes, planes, 3, false) + bn_params(planes);
  if (stride != 1 || in != planes) n += conv_params(in, planes, 1, false) + bn_params(planes);
  return n;
}

// A bottleneck: 1x1 in -> p, 3x3 p -> p, 1x1 p -> 4p, a BN after each, and the projection.
int64_t bottleneck_params(int64_t in, int64_t planes, int stride) {
  const int64_t out = 4 * planes;
  int64_t n = conv_params(in, planes, 1, false) + bn_params(planes) +
              conv_params(planes, planes, 3, false) + bn_params(planes) +
              conv_params(planes, out, 1, false) + bn_params(out);
  if (stride != 1 || in != out) n += conv_params(in, out, 1, false) + bn_params(out);
  return n;
}

int64_t resnet_params(bool bottleneck, std::vector<int64_t> layers, int64_t classes,
                      int64_t in_channels, bool small_input) {
  int64_t n = conv_params(in_channels, 64, small_input ? 3 : 7, false) + bn_params(64);
  int64_t in = 64;
  const int64_t planes[4] = {64, 128, 256, 512};
  for (int s = 0; s < 4; ++s) {
    for (int64_t b = 0; b < layers[static_cast<size_t>(s)]; ++b) {
      const int stride = (b == 0 && s > 0) ? 2 : 1;
      if (bottleneck) {
        n += bottleneck_params(in, planes[s], stride);
        in = 4 * planes[s];
      } else {
        n += basic_block_params(in, planes[s], stride);
        in = planes[s];
      }
    }
  }
  return n + linear_params(in, classes);
}

// Multiply-adds of a ResNet forward on one square image of side s (convs and the fc; BN, ReLU
// and pooling have none): Ho Wo O C k k per conv, with Ho = (H + 2p - k) / stride + 1.
int64_t resnet_macs(bool bottleneck, std::vector<int64_t> layers, int64_t s, int64_t classes) {
  auto out = [](int64_t h, int64_t k, int64_t stride, int64_t pad) {
    return (h + 2 * pad - k) / stride + 1;
  };
  auto conv = [](int64_t ho, int64_t o, int64_t c, int64_t k) { return ho * ho * o * c * k * k; };
  int64_t h = out(s, 7, 2, 3);  // stem conv 7x7 stride 2
  int64_t macs = conv(h, 64, 3, 7);
  h = out(h, 3, 2, 1);  // maxpool 3x3 stride 2
  int64_t in = 64;
  const int64_t planes[4] = {64, 128, 256, 512};
  for (int st = 0; st < 4; ++st) {
    for (int64_t b = 0; b < layers[static_cast<size_t>(st)]; ++b) {
      const int64_t stride = (b == 0 && st > 0) ? 2 : 1;
      const int64_t p = planes[st], o = bottleneck ? 4 * p : p;
      const int64_t ho = out(h, 3, stride, 1);
      if (bottleneck) {
        macs += conv(h, p, in, 1) + conv(ho, p, p, 3) + conv(ho, o, p, 1);
      } else {
        macs += conv(ho, p, in, 3) + conv(ho, p, p, 3);
      }
      if (stride != 1 || in != o) macs += conv(ho, o, in, 1);  // the projection
      in = o;
      h = ho;
    }
  }
  return macs + in * classes;
}

// GPT: wte V D + wpe P D + per block 12 D^2 + 13 D (attention 4 D^2 + 4 D, MLP 8 D^2 + 5 D, two
// LayerNorms 4 D) + ln_f 2 D, + V D for an untied head (no bias).
int64_t gpt_params(const nn::GPTConfig& c) {
  const int64_t d = c.d_model;
  return c.vocab * d + c.block_size * d + c.layers * (12 * d * d + 13 * d) + 2 * d +
         (c.tie_weights ? 0 : c.vocab * d);
}

}  // namespace

// ---- MLP -------------------------------------------------------------------------------------

TEST_CASE("models: MLP 784-256-256-10 has 269,322 parameters and maps [N, ...] to [N, 10]") {
  prism::manual_seed(1);
  nn::MLP mlp({784, 256, 256, 10});
  const int64_t formula =
      linear_params(784, 256) + linear_params(256, 256) + linear_params(256, 10);
  CHECK(formula == 269322);
  CHECK(mlp.parameter_count() == formula);
  CHECK(mlp.extra_repr() == "784-256-256-10");
  CHECK(mlp.linears.size() == 3);
  const auto names = mlp.named_parameters();
  REQUIRE(names.size() == 6);
  CHECK(names[0].first == "fc1.weight");
  CHECK(names[5].first == "fc3.bias");

  // Images and rows are the same to it: everything after the batch dim is flattened.
  CHECK(mlp(prism::randn({2, 1, 28, 28})).shape() == Dims{2, 10});
  CHECK(mlp(prism::randn({2, 784})).shape() == Dims{2, 10});
  CHECK_THROWS_AS(mlp(prism::randn({2, 1, 27, 27})), Error);
  CHECK_THROWS_AS(mlp(prism::randn({784})), Error);
  CHECK_THROWS_AS(nn::MLP({784}), Error);
  CHECK_THROWS_AS(nn::MLP({784, 0, 10}), Error);
}

TEST_CASE("models: MLP forward FLOPs equal 2 B sum(in out) + bias adds + ReLUs") {
  prism::manual_seed(2);
  nn::MLP mlp({784, 256, 256, 10});
  const int64_t b = 4;
  const Tensor x = prism::randn({b, 1, 28, 28});  // made before the session: not counted
  Dims out;
  const Totals t = profile_forward(mlp, x, &out);
  CHECK(out == Dims{b, 10});

  // docs/COSTS.md: the product 2 m n k; the bias 1 per output element (the [out] bias broadcast
  // over [B, out]); the ReLU 1 per element of the input it is applied to (fc2's and fc3's).
  // Each layer is one linear op; the flatten of a contiguous input is a view, not an op.
  const int64_t products = 2 * b * (784 * 256 + 256 * 256 + 256 * 10);
  const int64_t bias = b * (256 + 256 + 10);
  const int64_t relu = b * (256 + 256);
  CHECK(t.flops_by_op.at("linear") == products + bias + relu);
  CHECK(t.flops == 2'154'536);
  CHECK(t.macs == products / 2);
  CHECK(t.calls_by_op.at("linear") == 3);
  CHECK(t.calls_by_op.size() == 1);  // nothing else: no copies, no scalars

  // The same FLOPs as the ops the layers stand for, which run under another matmul variant.
  prism::kernels::Use use("matmul", "blocked");
  const Totals composed = profile_forward(mlp, x, &out);
  CHECK(composed.flops_by_op.at("matmul") == products);
  CHECK(composed.flops_by_op.at("add") == bias);
  CHECK(composed.flops_by_op.at("relu") == relu);
  CHECK(composed.flops == t.flops);
  CHECK(composed.calls_by_op.at("matmul") == 3);
  CHECK(composed.calls_by_op.at("add") == 3);
  CHECK(composed.calls_by_op.at("relu") == 2);
  CHECK(composed.calls_by_op.size() == 3);
}

// ---- LeNet -----------------------------------------------------------------------------------

TEST_CASE("models: LeNet has 160 + 4,640 + 8,010 = 12,810 parameters and outputs [N, 10]") {
  prism::manual_seed(3);
  nn::LeNet net;  // 1 channel, 28x28, 10 classes
  CHECK(conv_params(1, 16, 3, true) == 160);
  CHECK(conv_params(16, 32, 3, true) == 4640);
  CHECK(linear_params(32 * 5 * 5, 10) == 8010);
  CHECK(net.flat_features() == 800);  // 28 -> 26 -> 13 -> 11 -> 5: 32 * 5 * 5
  CHECK(net.parameter_count() == 12810);
  CHECK(net(prism::randn({2, 1, 28, 28})).shape() == Dims{2, 10});
  CHECK_THROWS_AS(net(prism::randn({2, 1, 32, 32})), Error);  // the fc is sized for 28x28
  CHECK_THROWS_AS(net(prism::randn({2, 3, 28, 28})), Error);

  // Other channels and sizes: 3x32x32 goes 32 -> 30 -> 15 -> 13 -> 6, so 32 * 6 * 6 = 1,152.
  DefaultDevice meta(Device::meta);
  nn::LeNet cifar(3, 32, 100);
  CHECK(cifar.flat_features() == 1152);
  CHECK(cifar.parameter_count() ==
        conv_params(3, 16, 3, true) + conv_params(16, 32, 3, true) + linear_params(1152, 100));
  CHECK(cifar(prism::zeros({2, 3, 32, 32})).shape() == Dims{2, 100});
  CHECK(nn::LeNet(1, 10, 10).flat_features() == 32);  // the smallest: 10 -> 8 -> 4 -> 2 -> 1
  CHECK_THROWS_AS(nn::LeNet(1, 9, 10), Error);
}

TEST_CASE("models: LeNet forward FLOPs equal the conv, ReLU, pool and linear formulas") {
  prism::manual_seed(4);
  nn::LeNet net;
  const int64_t b = 2;
  const Tensor x = prism::randn({b, 1, 28, 28});
  Dims out;
  const Totals t = profile_forward(net, x, &out);
  CHECK(out == Dims{b, 10});

  // conv2d: 2 N O Ho Wo C k k multiply-adds' FLOPs + N O Ho Wo for the bias; relu 1 per
  // element; max pool 2x2: 4 compares per output; fc: 2 N 800 10 + N 10 (matmul + bias add).
  const int64_t conv1 = 2 * b * 16 * 26 * 26 * 1 * 9 + b * 16 * 26 * 26;
  const int64_t relu1 = b * 16 * 26 * 26;
  const int64_t pool1 = b * 16 * 13 * 13 * 4;
  const int64_t conv2 = 2 * b * 32 * 11 * 11 * 16 * 9 + b * 32 * 11 * 11;
  const int64_t relu2 = b * 32 * 11 * 11;
  const int64_t pool2 = b * 32 * 5 * 5 * 4;
  const int64_t fc_matmul = 2 * b * 800 * 10;
  const int64_t fc_bias = b * 10;
  CHECK(t.flops_by_op.at("conv2d") == conv1 + conv2);
  CHECK(t.flops_by_op.at("relu") == relu1 + relu2);
  CHECK(t.flops_by_op.at("max_pool2d") == pool1 + pool2);
  CHECK(t.flops_by_op.at("matmul") == fc_matmul);
  CHECK(t.flops_by_op.at("add") == fc_bias);
  CHECK(t.flops == conv1 + relu1 + pool1 + conv2 + relu2 + pool2 + fc_matmul + fc_bias);
  CHECK(t.flops == 2'738'452);
  // MACs: the convs' and the matmul's multiply-adds, no bias.
  CHECK(t.macs == b * (16 * 26 * 26 * 9 + 32 * 11 * 11 * 16 * 9 + 800 * 10));
  CHECK(t.calls_by_op.size() == 5);
}

// ---- ResNet ----------------------------------------------------------------------------------

TEST_CASE("models: ResNet parameter counts match the formulas and the published figures") {
  DefaultDevice meta(Device::meta);  // 25M parameters cost no memory here
  const auto r18 = nn::resnet18();
  const auto r34 = nn::resnet34();
  const auto r50 = nn::resnet50();
  const auto r101 = nn::resnet101();
  CHECK(resnet_params(false, {2, 2, 2, 2}, 1000, 3, false) == 11'689'512);
  CHECK(resnet_params(false, {3, 4, 6, 3}, 1000, 3, false) == 21'797'672);
  CHECK(resnet_params(true, {3, 4, 6, 3}, 1000, 3, false) == 25'557'032);
  CHECK(resnet_params(true, {3, 4, 23, 3}, 1000, 3, false) == 44'549'160);
  CHECK(r18->parameter_count() == 11'689'512);
  CHECK(r34->parameter_count() == 21'797'672);
  CHECK(r50->parameter_count() == 25'557'032);
  CHECK(r101->parameter_count() == 44'549'160);
  for (const Tensor& p : r50->parameters()) CHECK(p.device() == Device::meta);

  // BN running statistics are buffers, not parameters: two per BN channel. resnet18's BNs have
  // 64 (stem) + 4*64 + (4*128 + 128) + (4*256 + 256) + (4*512 + 512) = 4,800 channels.
  CHECK(buffer_count(*r18) == 2 * 4800);

  // torchvision's names, so checkpoints line up.
  const auto names = r18->named_parameters();
  CHECK(names.front().first == "conv1.weight");
  CHECK(names.back().first == "fc.bias");
  bool has_projection = false;
  for (const auto& [name, t] : names) has_projection |= name == "layer2.0.downsample.0.weight";
  CHECK(has_projection);

  // Other heads and inputs: 10 classes, 1 channel, the small stem.
  CHECK(nn::resnet18(10, 1, true)->parameter_count() ==
        resnet_params(false, {2, 2, 2, 2}, 10, 1, true));
  CHECK(nn::resnet50(10, 3, true)->parameter_count() ==
        resnet_params(true, {3, 4, 6, 3}, 10, 3, true));
}

TEST_CASE("models: ResNet at 224x224 on meta: shapes and the multiply-adds of its convs") {
  DefaultDevice meta(Device::meta);
  const auto r18 = nn::resnet18();
  Dims out;
  const Totals t18 = profile_forward(*r18, prism::zeros({1, 3, 224, 224}), &out);
  CHECK(out == Dims{1, 1000});
  // Convs + fc, by hand (Ho Wo O C k k each): stem 112*112*64*3*49 = 118,013,952; layer1 four
  // 56*56*64*64*9 = 4 * 115,605,504; layers 2-4 each 57,802,752 + 3 * 115,605,504 + 6,422,528
  // (the projection) = 411,041,792; fc 512,000. The well-known "1.81 GMACs" of ResNet-18.
  CHECK(t18.macs == 118'013'952 + 4 * 115'605'504 + 3 * 411'041'792 + 512'000);
  CHECK(t18.macs == 1'814'073'344);
  CHECK(t18.macs == resnet_macs(false, {2, 2, 2, 2}, 224, 1000));

  const auto r50 = nn::resnet50();
  const Totals t50 = profile_forward(*r50, prism::zeros({2, 3, 224, 224}), &out);
  CHECK(out == Dims{2, 1000});
  // ResNet-50 (v1.5) is quoted as 4.09 GMACs per image (torchvision's "GFLOPS").
  CHECK(t50.macs == 2 * 4'089'184'256);
  CHECK(t50.macs == 2 * resnet_macs(true, {3, 4, 6, 3}, 224, 1000));
  CHECK(t50.calls_by_op.at("conv2d") == 1 + 16 * 3 + 4);  // stem, 16 bottlenecks, projections
}

TEST_CASE("models: ResNet-18 with the small-input stem runs on cpu at batch 2") {
  OneThread one_thread;
  prism::manual_seed(5);
  const auto net = nn::resnet18(10, 3, /*small_input=*/true);
  CHECK(net->maxpool == nullptr);
  const Tensor x = prism::randn({2, 3, 16, 16});
  const Tensor y = (*net)(x);  // 16 -> 16 -> 8 -> 4 -> 2 -> avgpool 1
  CHECK(y.shape() == Dims{2, 10});
  for (double v : y.to_vector()) CHECK(std::isfinite(v));
  // Training mode updated the BN running statistics; eval mode uses them.
  net->eval();
  CHECK((*net)(x).shape() == Dims{2, 10});
  CHECK_THROWS_AS((*net)(prism::randn({2, 1, 16, 16})), Error);
}

// ---- GPT -------------------------------------------------------------------------------------

TEST_CASE("models: GPT-2 small has 124,439,808 parameters tied, on meta") {
  DefaultDevice meta(Device::meta);
  const nn::GPTConfig c = nn::gpt_config("gpt2-small");
  CHECK(c.vocab == 50257);
  CHECK(c.block_size == 1024);
  CHECK(c.d_model == 768);
  CHECK(c.heads == 12);
  CHECK(c.layers == 12);
  CHECK(c.tie_weights);
  CHECK(gpt_params(c) == 124'439'808);

  nn::GPT gpt(c);
  CHECK(gpt.parameter_count() == 124'439'808);
  CHECK(gpt.head == nullptr);
  for (const auto& [name, t] : gpt.named_parameters()) CHECK(name != "head.weight");

  // Untied: one more [V, D] matrix.
  nn::GPTConfig untied = c;
  untied.tie_weights = false;
  CHECK(nn::GPT(untied).parameter_count() == 124'439'808 + 50257 * 768);
  CHECK(gpt_params(untied) == 163'037'184);

  const nn::GPTConfig medium = nn::gpt_config("gpt2-medium");
  CHECK(gpt_params(medium) == 354'823'168);
  CHECK(nn::GPT(medium).parameter_count() == 354'823'168);
  CHECK_THROWS_AS(nn::gpt_config("gpt5"), Error);
}

TEST_CASE("models: GPT-2 small forward on meta: [1, 1024] ids to [1, 1024, 50257] logits") {
  DefaultDevice meta(Device::meta);
  nn::GPT gpt(nn::gpt_config("gpt2-small"));
  Dims out;
  const Totals t = profile_forward(gpt, prism::zeros({1, 1024}, DType::i64), &out);
  CHECK(out == Dims{1, 1024, 50257});
  // Matmul FLOPs per layer: qkv 2 T D 3D, proj 2 T D D, the MLP's second Linear 2 T 4D D
  // = 16 T D^2; the head 2 T D V. The MLP's first Linear and its GELU are one linear_gelu op
  // (2 T D 4D + 9 per output), and q k^T, the softmax and A v one attention op (causal:
  // T (T + 1) / 2 pairs per head, 4 d + 5 FLOPs each).
  const int64_t T = 1024, D = 768, L = 12, V = 50257, H = 12, d = D / H;
  CHECK(t.flops_by_op.at("matmul") == L * 16 * T * D * D + 2 * T * D * V);
  CHECK(t.flops_by_op.at("linear_gelu") == L * (8 * T * D * D + 9 * T * 4 * D));
  CHECK(t.flops_by_op.at("attention") == L * H * T * (T + 1) / 2 * (4 * d + 5));
  CHECK(t.calls_by_op.at("matmul") == L * 3 + 1);
  CHECK(t.calls_by_op.at("linear_gelu") == L);
  CHECK(t.calls_by_op.at("attention") == L);
}

TEST_CASE("models: gpt-char maps [2, T] ids to [2, T, vocab] on cpu") {
  OneThread one_thread;  // its [32, 128] x [128, 384] matmuls are small: see OneThread
  prism::manual_seed(6);
  const nn::GPTConfig c = nn::gpt_config("gpt-char");
  CHECK(c.d_model == 128);
  CHECK(c.heads == 4);
  CHECK(c.layers == 4);
  CHECK(c.block_size == 128);
  nn::GPT gpt(c);
  CHECK(gpt.parameter_count() == gpt_params(c));
  CHECK(gpt.parameter_count() == 826'112);

  std::vector<int64_t> ids(2 * 16), next(2 * 16);
  for (size_t i = 0; i < ids.size(); ++i) {
    ids[i] = static_cast<int64_t>((i * 37) % 128);
    next[i] = static_cast<int64_t>((i * 53 + 7) % 128);
  }
  const Tensor logits = gpt(prism::from_vector(ids, {2, 16}));
  CHECK(logits.shape() == Dims{2, 16, 128});
  // GPT-2's init: small logits, so a new model's guess is near uniform: the loss on targets it
  // has no reason to prefer is near ln V. (The token's own id scores a little higher: the
  // residual stream carries its embedding, which the tied head reads back.)
  prism::NoGrad no_grad;
  const double loss =
      nn::cross_entropy(logits.reshape({32, 128}), prism::from_vector(next, {32})).item();
  CHECK(loss == doctest::Approx(std::log(128.0)).epsilon(0.05));

  CHECK_THROWS_AS(gpt(prism::zeros({1, 129}, DType::i64)), Error);    // longer than block_size
  CHECK_THROWS_AS(gpt(prism::zeros({1, 4})), Error);                  // float, not ids
  CHECK_THROWS_AS(gpt(prism::zeros({4}, DType::i64)), Error);         // no batch dim
  CHECK_THROWS_AS(gpt(prism::full({1, 4}, 128, DType::i64)), Error);  // outside the vocab
}

namespace {
nn::GPTConfig tiny_gpt(bool tied = true) {
  nn::GPTConfig c;
  c.vocab = 11;
  c.block_size = 8;
  c.d_model = 32;
  c.heads = 2;
  c.layers = 2;
  c.dropout = 0;
  c.tie_weights = tied;
  return c;
}
}  // namespace

TEST_CASE("models: a small GPT overfits one batch (tied and untied heads)") {
  for (bool tied : {true, false}) {
    CAPTURE(tied);
    prism::manual_seed(7);
    nn::GPT gpt(tiny_gpt(tied));
    // Two sequences of 9 tokens: the model reads the first 8 and predicts the next of each.
    const std::vector<int64_t> a{1, 4, 1, 5, 9, 2, 6, 5, 3}, b{2, 7, 1, 8, 2, 8, 1, 8, 2};
    std::vector<int64_t> in, target;
    for (const auto* s : {&a, &b}) {
      in.insert(in.end(), s->begin(), s->end() - 1);
      target.insert(target.end(), s->begin() + 1, s->end());
    }
    const Tensor x = prism::from_vector(in, {2, 8});
    const Tensor y = prism::from_vector(target, {16});
    nn::optim::Adam opt(gpt.parameters(), 1e-2);
    double first = 0, last = 0;
    for (int step = 0; step < 40; ++step) {
      Tensor loss = nn::cross_entropy(gpt(x).reshape({16, 11}), y);
      if (step == 0) first = loss.item();
      last = loss.item();
      loss.backward();
      opt.step();
      opt.zero_grad();
    }
    CHECK(first == doctest::Approx(std::log(11.0)).epsilon(0.1));
    CHECK(last < 0.25 * first);
  }
}

TEST_CASE("models: GPT generate: length, vocabulary, seeds and its own generator") {
  prism::manual_seed(8);
  nn::GPT gpt(tiny_gpt());
  const std::vector<int64_t> prompt{1, 2, 3};

  // 20 new tokens with a context of 8: the context is cropped to the last 8 tokens.
  const auto s1 = gpt.generate(prompt, 20, 1.0, 0, 42);
  REQUIRE(s1.size() == 23);
  CHECK(std::vector<int64_t>(s1.begin(), s1.begin() + 3) == prompt);
  for (int64_t id : s1) CHECK((id >= 0 && id < 11));
  CHECK(gpt.generate(prompt, 20, 1.0, 0, 42) == s1);  // the same seed, the same text
  CHECK(gpt.generate(prompt, 20, 1.0, 0, 43) != s1);  // another seed, another text
  CHECK(gpt.generate(prompt, 0, 1.0, 0, 42) == prompt);

  // top_k 1 and temperature 0 are both greedy, whatever the seed.
  const auto g = gpt.generate(prompt, 10, 0.0, 0, 1);
  CHECK(gpt.generate(prompt, 10, 0.7, 1, 2) == g);
  CHECK(gpt.generate(prompt, 10, 0.0, 5, 3) == g);
  // top_k 3: every sampled token is one of the 3 most likely given its (cropped) context.
  const auto k3 = gpt.generate(prompt, 10, 1.0, 3, 9);
  REQUIRE(k3.size() == 13);
  CHECK(gpt.generate(prompt, 10, 1.0, 3, 9) == k3);
  {
    prism::NoGrad no_grad;
    gpt.eval();
    for (size_t i = prompt.size(); i < k3.size(); ++i) {
      const size_t start = i > 8 ? i - 8 : 0;
      const std::vector<int64_t> ctx(k3.begin() + static_cast<std::ptrdiff_t>(start),
                                     k3.begin() + static_cast<std::ptrdiff_t>(i));
      const int64_t t = static_cast<int64_t>(ctx.size());
      const auto logits = gpt(prism::from_vector(ctx, {1, t})).select(0, 0).select(0, t - 1);
      const std::vector<double> l = logits.to_vector();
      int higher = 0;  // tokens strictly more likely than the one sampled
      for (double v : l) higher += v > l[static_cast<size_t>(k3[i])];
      CHECK(higher < 3);
    }
    gpt.train();
  }

  // It leaves the global generator and the training mode as they were.
  prism::manual_seed(99);
  const auto expected = prism::rand({4}).to_vector();
  prism::manual_seed(99);
  CHECK(gpt.is_training());
  gpt.generate(prompt, 5, 1.0, 0, 7);
  CHECK(gpt.is_training());
  CHECK(prism::rand({4}).to_vector() == expected);
  gpt.eval();
  gpt.generate(prompt, 1);
  CHECK_FALSE(gpt.is_training());

  CHECK_THROWS_AS(gpt.generate({}, 5), Error);
  CHECK_THROWS_AS(gpt.generate({11}, 5), Error);  // outside the vocabulary
  CHECK_THROWS_AS(gpt.generate(prompt, -1), Error);
  CHECK_THROWS_AS(gpt.generate(prompt, 5, -1.0), Error);
  CHECK_THROWS_AS(gpt.generate(prompt, 5, 1.0, -2), Error);
  DefaultDevice meta(Device::meta);
  nn::GPT shapes_only(tiny_gpt());
  CHECK_THROWS_AS(shapes_only.generate(prompt, 5), Error);  // no values to sample from
}

// ---- the zoo ---------------------------------------------------------------------------------

TEST_CASE("models: the zoo builds every model by name, with its default input, on meta") {
  DefaultDevice meta(Device::meta);
  const std::vector<std::string> names = nn::model_names();
  const std::vector<std::string> expected{"mlp",      "cnn",      "transformer", "resnet18",
                                          "resnet34", "resnet50", "gpt2-small",  "gpt2-medium"};
  CHECK(names == expected);
  const std::map<std::string, int64_t> params{{"mlp", 269'322},
                                              {"cnn", 12'810},
                                              {"transformer", 826'112},
                                              {"resnet18", 11'689'512},
                                              {"resnet34", 21'797'672},
                                              {"resnet50", 25'557'032},
                                              {"gpt2-small", 124'439'808},
                                              {"gpt2-medium", 354'823'168}};
  const std::map<std::string, Dims> inputs{
      {"mlp", {1, 1, 28, 28}},        {"cnn", {1, 1, 28, 28}},
      {"transformer", {1, 128}},      {"resnet18", {1, 3, 224, 224}},
      {"resnet34", {1, 3, 224, 224}}, {"resnet50", {1, 3, 224, 224}},
      {"gpt2-small", {1, 1024}},      {"gpt2-medium", {1, 1024}}};
  for (const auto& name : names) {
    CAPTURE(name);
    CHECK_FALSE(nn::model_description(name).empty());
    const auto model = nn::make_model(name);
    CHECK(model->parameter_count() == params.at(name));
    const nn::ModelInput in = nn::default_input(name);
    CHECK(in.shape == inputs.at(name));
    const bool is_gpt = name == "transformer" || name.rfind("gpt2", 0) == 0;
    CHECK(in.dtype == (is_gpt ? DType::i64 : DType::f32));
    if (name == "gpt2-medium") continue;  // the same code as gpt2-small, twice the layers
    const Tensor y = (*model)(in.make());
    CHECK(y.shape()[0] == 1);
  }
  CHECK(nn::make_model("lenet")->parameter_count() == 12'810);
  CHECK(nn::make_model("gpt-char")->parameter_count() == 826'112);
}

TEST_CASE("models: zoo options reach the models, and bad names and options are errors") {
  DefaultDevice meta(Device::meta);
  nn::ModelOptions cifar;
  cifar.in_channels = 3;
  cifar.image_size = 32;
  cifar.num_classes = 10;
  // 32x32 gets the small stem: no maxpool, conv1 3x3.
  const auto r = nn::make_model("resnet18", cifar);
  CHECK(r->parameter_count() == resnet_params(false, {2, 2, 2, 2}, 10, 3, true));
  CHECK((*r)(nn::default_input("resnet18", cifar).make()).shape() == Dims{1, 10});
  CHECK(nn::default_input("resnet18", cifar).shape == Dims{1, 3, 32, 32});
  CHECK(nn::make_model("cnn", cifar)->parameter_count() ==
        conv_params(3, 16, 3, true) + conv_params(16, 32, 3, true) + linear_params(1152, 10));
  CHECK(nn::make_model("mlp", cifar)->parameter_count() ==
        linear_params(3 * 32 * 32, 256) + linear_params(256, 256) + linear_params(256, 10));

  nn::ModelOptions mlp;
  mlp.hidden = {100};
  CHECK(nn::make_model("mlp", mlp)->parameter_count() ==
        linear_params(784, 100) + linear_params(100, 10));

  nn::ModelOptions text;
  text.vocab = 65;
  text.block_size = 64;
  text.tie_weights = false;
  nn::GPTConfig c = nn::gpt_config("gpt-char");
  c.vocab = 65;
  c.block_size = 64;
  c.tie_weights = false;
  CHECK(nn::make_model("transformer", text)->parameter_count() == gpt_params(c));
  CHECK(nn::default_input("transformer", text).shape == Dims{1, 64});

  try {
    nn::make_model("resnet1000");
    FAIL("an unknown name must throw");
  } catch (const Error& e) {
    const std::string msg = e.what();
    CHECK(msg.find("resnet1000") != std::string::npos);
    for (const auto& name : nn::model_names()) CHECK(msg.find(name) != std::string::npos);
  }
  CHECK_THROWS_AS(nn::default_input("nope"), Error);
  CHECK_THROWS_AS(nn::model_description("nope"), Error);
  nn::ModelOptions bad;
  bad.num_classes = -1;
  CHECK_THROWS_AS(nn::make_model("mlp", bad), Error);
}

TEST_CASE("models: width and depth scale the mlp, the cnn and the GPTs, and only those") {
  DefaultDevice meta(Device::meta);
  nn::ModelOptions o;
  o.width = 100;
  o.depth = 3;
  CHECK(nn::make_model("mlp", o)->parameter_count() ==
        linear_params(784, 100) + 2 * linear_params(100, 100) + linear_params(100, 10));
  nn::ModelOptions cnn;
  cnn.width = 8;  // conv1 8 channels, conv2 16, the head reads 16 * 5 * 5
  const auto lenet = nn::make_model("cnn", cnn);
  CHECK(lenet->parameter_count() ==
        conv_params(1, 8, 3, true) + conv_params(8, 16, 3, true) + linear_params(400, 10));
  CHECK((*lenet)(nn::default_input("cnn", cnn).make()).shape() == Dims{1, 10});

  nn::ModelOptions gpt;
  gpt.width = 64;
  gpt.depth = 2;
  nn::GPTConfig c = nn::gpt_config("gpt-char");
  c.d_model = 64;
  c.layers = 2;
  CHECK(nn::make_model("transformer", gpt)->parameter_count() == gpt_params(c));

  auto message = [](const std::string& name, const nn::ModelOptions& opts) {
    try {
      nn::make_model(name, opts);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  nn::ModelOptions depth_only;
  depth_only.depth = 3;
  CHECK(message("cnn", depth_only).find("depth is fixed") != std::string::npos);
  nn::ModelOptions width_only;
  width_only.width = 32;
  CHECK(message("resnet18", width_only).find("width is fixed") != std::string::npos);
  nn::ModelOptions odd;
  odd.width = 66;  // not a multiple of gpt-char's 4 heads
  CHECK(message("transformer", odd).find("multiple of the 4 heads") != std::string::npos);
  nn::ModelOptions both;
  both.hidden = {64};
  both.width = 32;
  CHECK(message("mlp", both).find("not both") != std::string::npos);
  nn::ModelOptions huge;
  huge.width = int64_t{1} << 40;
  CHECK(message("mlp", huge).find("past the largest") != std::string::npos);
  nn::ModelOptions negative;
  negative.depth = -2;
  CHECK(message("mlp", negative).find("depth must be positive") != std::string::npos);
}
