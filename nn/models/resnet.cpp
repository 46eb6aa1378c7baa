#include "nn/models/resnet.h"

#include <cmath>

#include "nn/init.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/ops.h"

namespace prism::nn {

namespace {

void check_block(const char* type, int64_t in, int64_t planes, int stride) {
  if (in <= 0 || planes <= 0 || stride <= 0) {
    throw Error(std::string(type) +
                ": channels and stride must be positive, got in=" + std::to_string(in) +
                ", planes=" + std::to_string(planes) + ", stride=" + std::to_string(stride));
  }
}

// The projection shortcut: conv 1x1 stride s (no bias) + BN, or null when the block keeps the
// shape and x can be added as it is.
std::shared_ptr<Sequential> make_downsample(int64_t in, int64_t out, int stride) {
  if (stride == 1 && in == out) return nullptr;
  auto seq = std::make_shared<Sequential>();
  seq->emplace<Conv2d>(in, out, 1, stride, 0, false);
  seq->emplace<BatchNorm2d>(out);
  return seq;
}

std::string block_repr(int64_t in, int64_t out, int stride) {
  return std::to_string(in) + " -> " + std::to_string(out) + ", stride=" + std::to_string(stride);
}

}  // namespace

// ---- BasicBlock ------------------------------------------------------------------------------

BasicBlock::BasicBlock(int64_t in_channels, int64_t planes, int stride)
    : in_(in_channels), planes_(planes), stride_(stride) {
  check_block("BasicBlock", in_channels, planes, stride);
  // Registration order follows torchvision, so named_parameters() lists the same names in the
  // same order: conv1, bn1, conv2, bn2, downsample.
  conv1 =
      register_module("conv1", std::make_shared<Conv2d>(in_channels, planes, 3, stride, 1, false));
  bn1 = register_module("bn1", std::make_shared<BatchNorm2d>(planes));
  relu = register_module("relu", std::make_shared<ReLU>());
  conv2 = register_module("conv2", std::make_shared<Conv2d>(planes, planes, 3, 1, 1, false));
  bn2 = register_module("bn2", std::make_shared<BatchNorm2d>(planes));
  downsample = make_downsample(in_channels, planes * expansion, stride);
  if (downsample) register_module("downsample", downsample);
}

Tensor BasicBlock::forward(const Tensor& x) {
  Tensor out = (*relu)((*bn1)((*conv1)(x)));  // [N, planes, H/s, W/s]
  out = (*bn2)((*conv2)(out));
  const Tensor shortcut = downsample ? (*downsample)(x) : x;
  return (*relu)(out + shortcut);
}

std::string BasicBlock::extra_repr() const {
  return block_repr(in_, planes_ * expansion, stride_);
}

// ---- Bottleneck ------------------------------------------------------------------------------

Bottleneck::Bottleneck(int64_t in_channels, int64_t planes, int stride)
    : in_(in_channels), planes_(planes), stride_(stride) {
  check_block("Bottleneck", in_channels, planes, stride);
  conv1 = register_module("conv1", std::make_shared<Conv2d>(in_channels, planes, 1, 1, 0, false));
  bn1 = register_module("bn1", std::make_shared<BatchNorm2d>(planes));
  // The stride sits on the 3x3 (torchvision's "v1.5"): a strided 1x1 would skip 3/4 of the
  // input pixels outright.
  conv2 = register_module("conv2", std::make_shared<Conv2d>(planes, planes, 3, stride, 1, false));
  bn2 = register_module("bn2", std::make_shared<BatchNorm2d>(planes));
  conv3 = register_module("conv3",
                          std::make_shared<Conv2d>(planes, planes * expansion, 1, 1, 0, false));
  bn3 = register_module("bn3", std::make_shared<BatchNorm2d>(planes * expansion));
  relu = register_module("relu", std::make_shared<ReLU>());
  downsample = make_downsample(in_channels, planes * expansion, stride);
  if (downsample) register_module("downsample", downsample);
}

Tensor Bottleneck::forward(const Tensor& x) {
  Tensor out = (*relu)((*bn1)((*conv1)(x)));  // [N, planes, H, W]
  out = (*relu)((*bn2)((*conv2)(out)));       // [N, planes, H/s, W/s]
  out = (*bn3)((*conv3)(out));                // [N, 4 planes, H/s, W/s]
  const Tensor shortcut = downsample ? (*downsample)(x) : x;
  return (*relu)(out + shortcut);
}

std::string Bottleneck::extra_repr() const {
  return block_repr(in_, planes_ * expansion, stride_);
}

// ---- ResNet ----------------------------------------------------------------------------------

ResNet::ResNet(const ResNetConfig& config) : config_(config) {
  if (config.num_classes <= 0 || config.in_channels <= 0) {
    throw Error("ResNet: num_classes and in_channels must be positive (" + extra_repr() + ")");
  }
  for (int64_t n : config.layers) {
    if (n <= 0) throw Error("ResNet: every stage needs at least one block (" + extra_repr() + ")");
  }
  if (config.small_input) {
    conv1 =
        register_module("conv1", std::make_shared<Conv2d>(config.in_channels, 64, 3, 1, 1, false));
  } else {
    conv1 =
        register_module("conv1", std::make_shared<Conv2d>(config.in_channels, 64, 7, 2, 3, false));
  }
  bn1 = register_module("bn1", std::make_shared<BatchNorm2d>(64));
  relu = register_module("relu", std::make_shared<ReLU>());
  if (!config.small_input)
    maxpool = register_module("maxpool", std::make_shared<MaxPool2d>(3, 2, 1));

  int64_t channels = 64;  // make_stage advances it to each stage's output width
  layer1 = register_module("layer1", make_stage(channels, 64, config.layers[0], 1));
  layer2 = register_module("layer2", make_stage(channels, 128, config.layers[1], 2));
  layer3 = register_module("layer3", make_stage(channels, 256, config.layers[2], 2));
  layer4 = register_module("layer4", make_stage(channels, 512, config.layers[3], 2));
  avgpool = register_module("avgpool", std::make_shared<AdaptiveAvgPool2d>(1));
  flatten = register_module("flatten", std::make_shared<Flatten>(1, -1));
  fc = register_module("fc", std::make_shared<Linear>(channels, config.num_classes));

  // torchvision's initialisation of the convolutions: N(0, 2 / fan_out). Drawn on the device
  // the weights live on (nothing is drawn on meta).
  NoGrad no_grad;
  walk([](const std::string&, const Module& m, int) {
    const auto* conv = dynamic_cast<const Conv2d*>(&m);
    if (!conv) return;
    const Dims& s = conv->weight.shape();  // [O, C, k, k]
    const double sd = std::sqrt(2.0 / static_cast<double>(s[0] * s[2] * s[3]));
    DefaultDevice on(conv->weight.device());
    assign(conv->weight, init::normal(s, 0.0, sd, conv->weight.dtype()));
  });
}

std::shared_ptr<Sequential> ResNet::make_stage(int64_t& in_channels, int64_t planes, int64_t blocks,
                                               int stride) {
  // The first block of a stage changes the width (and, after layer1, halves H and W); the
  // others keep the shape, so their shortcut is the identity.
  auto stage = std::make_shared<Sequential>();
  for (int64_t i = 0; i < blocks; ++i) {
    const int s = i == 0 ? stride : 1;
    if (config_.block == ResNetBlock::basic) {
      stage->emplace<BasicBlock>(in_channels, planes, s);
      in_channels = planes * BasicBlock::expansion;
    } else {
      stage->emplace<Bottleneck>(in_channels, planes, s);
      in_channels = planes * Bottleneck::expansion;
    }
  }
  return stage;
}

Tensor ResNet::forward(const Tensor& x) {
  if (x.dim() != 4 || x.size(1) != config_.in_channels) {
    throw Error("ResNet(" + extra_repr() + "): input " + x.shape().str() + " must be [N, " +
                std::to_string(config_.in_channels) + ", H, W]");
  }
  Tensor h = (*relu)((*bn1)((*conv1)(x)));  // [N, 64, S/2, S/2], or [N, 64, S, S] small
  if (maxpool) h = (*maxpool)(h);           // [N, 64, S/4, S/4]
  h = (*layer1)(h);                         // [N, 64 e, ., .]
  h = (*layer2)(h);                         // [N, 128 e, /2, /2]
  h = (*layer3)(h);                         // [N, 256 e, /2, /2]
  h = (*layer4)(h);                         // [N, 512 e, /2, /2]
  h = (*flatten)((*avgpool)(h));            // [N, 512 e, 1, 1] -> [N, 512 e]
  return (*fc)(h);                          // [N, classes]
}

std::string ResNet::extra_repr() const {
  std::string s = config_.block == ResNetBlock::basic ? "basic [" : "bottleneck [";
  for (size_t i = 0; i < config_.layers.size(); ++i) {
    if (i > 0) s += ",";
    s += std::to_string(config_.layers[i]);
  }
  return s + "], in_channels=" + std::to_string(config_.in_channels) +
         ", classes=" + std::to_string(config_.num_classes) +
         ", stem=" + (config_.small_input ? "small" : "imagenet");
}

namespace {
std::shared_ptr<ResNet> make_resnet(ResNetBlock block, std::array<int64_t, 4> layers,
                                    int64_t num_classes, int64_t in_channels, bool small_input) {
  ResNetConfig c;
  c.block = block;
  c.layers = layers;
  c.num_classes = num_classes;
  c.in_channels = in_channels;
  c.small_input = small_input;
  return std::make_shared<ResNet>(c);
}
}  // namespace

std::shared_ptr<ResNet> resnet18(int64_t num_classes, int64_t in_channels, bool small_input) {
  return make_resnet(ResNetBlock::basic, {2, 2, 2, 2}, num_classes, in_channels, small_input);
}
std::shared_ptr<ResNet> resnet34(int64_t num_classes, int64_t in_channels, bool small_input) {
  return make_resnet(ResNetBlock::basic, {3, 4, 6, 3}, num_classes, in_channels, small_input);
}
std::shared_ptr<ResNet> resnet50(int64_t num_classes, int64_t in_channels, bool small_input) {
  return make_resnet(ResNetBlock::bottleneck, {3, 4, 6, 3}, num_classes, in_channels, small_input);
}
std::shared_ptr<ResNet> resnet101(int64_t num_classes, int64_t in_channels, bool small_input) {
  return make_resnet(ResNetBlock::bottleneck, {3, 4, 23, 3}, num_classes, in_channels, small_input);
}

}  // namespace prism::nn
