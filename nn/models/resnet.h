// ResNet (He et al., 2016, "Deep Residual Learning for Image Recognition"), laid out as
// torchvision lays it out (stride on the 3x3 conv of a bottleneck, "v1.5"), with the same
// parameter names, so a checkpoint's tensors line up name for name.
//
// A residual block learns a correction F(x) to its input, y = relu(F(x) + shortcut(x)): the
// identity path lets the gradient reach early layers undiminished, which is what lets 50+ layers
// train. When the block changes the shape (stride 2, or more channels), the shortcut is a
// projection, conv 1x1 (stride s) + BN, named "downsample" ("downsample.0" conv, ".1" BN).
//
//   BasicBlock (resnet18/34), expansion 1:   x [N, in, H, W]
//     conv1 3x3 stride s, bn1, relu          [N, planes, H/s, W/s]
//     conv2 3x3,          bn2                [N, planes, H/s, W/s]
//     relu(out + shortcut(x))
//   Bottleneck (resnet50/101), expansion 4: 1x1 reduces, 3x3 works at the narrow width, 1x1
//   expands again, so the 3x3 costs (planes)^2 instead of (4 planes)^2:
//     conv1 1x1, bn1, relu                   [N, planes, H, W]
//     conv2 3x3 stride s, bn2, relu          [N, planes, H/s, W/s]
//     conv3 1x1, bn3                         [N, 4 planes, H/s, W/s]
//     relu(out + shortcut(x))
//
//   ResNet:  x [N, C, S, S]
//     stem, ImageNet size: conv1 7x7 stride 2 pad 3, bn1, relu, maxpool 3x3 stride 2 pad 1
//                          [N, 64, S/4, S/4]                        224 -> 112 -> 56
//     stem, small input (28x28, 32x32): conv1 3x3 stride 1 pad 1, bn1, relu, no maxpool
//                          [N, 64, S, S]; a 7x7 stride-2 stem and a pool would leave a CIFAR
//                          image 8x8 before the first block
//     layer1 (planes 64, stride 1), layer2 (128, 2), layer3 (256, 2), layer4 (512, 2)
//                          [N, 512 e, S/32, S/32]                   56 -> 56 -> 28 -> 14 -> 7
//     avgpool (adaptive, to 1x1), flatten    [N, 512 e]            e = the block's expansion
//     fc                                     [N, classes]
//
// Convolutions have no bias (the BN right after would cancel it); BN has weight and bias
// (parameters) and running mean and variance (buffers, not parameters). Parameter counts with
// 3 channels and 1000 classes, as published: resnet18 11,689,512; resnet34 21,797,672;
// resnet50 25,557,032; resnet101 44,549,160.
//
// Initialisation as torchvision: conv weights N(0, 2 / fan_out) with fan_out = out k k (He et
// al., 2015, "fan_out" mode: keeps the variance of the gradients flowing back through the ReLUs),
// BN weight 1 and bias 0, the fc layer Linear's default.
#pragma once

#include <array>

#include "nn/layers/activation.h"
#include "nn/layers/adaptive_pool.h"
#include "nn/layers/container.h"
#include "nn/layers/conv.h"
#include "nn/layers/flatten.h"
#include "nn/layers/linear.h"
#include "nn/layers/normalization.h"
#include "nn/layers/pool.h"

namespace prism::nn {

class BasicBlock : public Module {
 public:
  static constexpr int64_t expansion = 1;
  BasicBlock(int64_t in_channels, int64_t planes, int stride = 1);
  Tensor forward(const Tensor& x) override;  // [N, in, H, W] -> [N, planes, H/s, W/s]
  std::string type_name() const override { return "BasicBlock"; }
  std::string extra_repr() const override;

  std::shared_ptr<Conv2d> conv1;
  std::shared_ptr<BatchNorm2d> bn1;
  std::shared_ptr<ReLU> relu;
  std::shared_ptr<Conv2d> conv2;
  std::shared_ptr<BatchNorm2d> bn2;
  std::shared_ptr<Sequential> downsample;  // null when the shortcut is the identity

 private:
  int64_t in_, planes_;
  int stride_;
};

class Bottleneck : public Module {
 public:
  static constexpr int64_t expansion = 4;
  Bottleneck(int64_t in_channels, int64_t planes, int stride = 1);
  Tensor forward(const Tensor& x) override;  // [N, in, H, W] -> [N, 4 planes, H/s, W/s]
  std::string type_name() const override { return "Bottleneck"; }
  std::string extra_repr() const override;

  std::shared_ptr<Conv2d> conv1;
  std::shared_ptr<BatchNorm2d> bn1;
  std::shared_ptr<Conv2d> conv2;
  std::shared_ptr<BatchNorm2d> bn2;
  std::shared_ptr<Conv2d> conv3;
  std::shared_ptr<BatchNorm2d> bn3;
  std::shared_ptr<ReLU> relu;
  std::shared_ptr<Sequential> downsample;  // null when the shortcut is the identity

 private:
  int64_t in_, planes_;
  int stride_;
};

enum class ResNetBlock { basic, bottleneck };

struct ResNetConfig {
  ResNetBlock block = ResNetBlock::basic;
  std::array<int64_t, 4> layers = {2, 2, 2, 2};  // blocks per stage
  int64_t num_classes = 1000;
  int64_t in_channels = 3;
  bool small_input = false;  // the 3x3 stride-1 stem without maxpool (28x28, 32x32 images)
};

class ResNet : public Module {
 public:
  explicit ResNet(const ResNetConfig& config);
  Tensor forward(const Tensor& x) override;  // [N, C, H, W] -> [N, classes]
  std::string type_name() const override { return "ResNet"; }
  std::string extra_repr() const override;
  const ResNetConfig& config() const { return config_; }

  std::shared_ptr<Conv2d> conv1;
  std::shared_ptr<BatchNorm2d> bn1;
  std::shared_ptr<ReLU> relu;
  std::shared_ptr<MaxPool2d> maxpool;  // null with small_input
  std::shared_ptr<Sequential> layer1, layer2, layer3, layer4;
  std::shared_ptr<AdaptiveAvgPool2d> avgpool;
  std::shared_ptr<Flatten> flatten;
  std::shared_ptr<Linear> fc;

 private:
  std::shared_ptr<Sequential> make_stage(int64_t& in_channels, int64_t planes, int64_t blocks,
                                         int stride);
  ResNetConfig config_;
};

// The standard depths: [2,2,2,2] basic, [3,4,6,3] basic, [3,4,6,3] bottleneck, [3,4,23,3]
// bottleneck.
std::shared_ptr<ResNet> resnet18(int64_t num_classes = 1000, int64_t in_channels = 3,
                                 bool small_input = false);
std::shared_ptr<ResNet> resnet34(int64_t num_classes = 1000, int64_t in_channels = 3,
                                 bool small_input = false);
std::shared_ptr<ResNet> resnet50(int64_t num_classes = 1000, int64_t in_channels = 3,
                                 bool small_input = false);
std::shared_ptr<ResNet> resnet101(int64_t num_classes = 1000, int64_t in_channels = 3,
                                  bool small_input = false);

}  // namespace prism::nn
