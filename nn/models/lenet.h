// LeNet: the small convolutional network of the course, in the spirit of LeCun et al. (1998)
// with today's choices (ReLU, max pooling, 3x3 kernels).
//
//   x [N, C, S, S]                                         (MNIST: C = 1, S = 28)
//   conv1  C -> 16, 3x3, stride 1, no padding     [N, 16, S-2, S-2]           28 -> 26
//   relu1, pool1 (max 2x2, stride 2)              [N, 16, P1, P1]  P1 = (S-2)/2      -> 13
//   conv2  16 -> 32, 3x3                          [N, 32, P1-2, P1-2]               -> 11
//   relu2, pool2 (max 2x2, stride 2)              [N, 32, P2, P2]  P2 = (P1-2)/2     -> 5
//   flatten                                       [N, 32*P2*P2]                     800
//   fc     32*P2*P2 -> classes                    [N, classes] (logits)
//
// Pooling floors: an odd size loses its last row and column (11 -> 5). The smallest image is
// S = 10 (P1 = 4, P2 = 1).
//
// Parameters (C = 1, S = 28, 10 classes): conv1 16*1*9 + 16 = 160, conv2 32*16*9 + 32 = 4,640,
// fc 800*10 + 10 = 8,010; total 12,810.
// Forward FLOPs at batch N (docs/COSTS.md): each conv 2 N O Ho Wo C*9 + N O Ho Wo (bias), each
// ReLU one per element, each max pool 4 per output, the fc 2 N 800 10 + N 10.
#pragma once

#include "nn/layers/activation.h"
#include "nn/layers/conv.h"
#include "nn/layers/flatten.h"
#include "nn/layers/linear.h"
#include "nn/layers/pool.h"

namespace prism::nn {

class LeNet : public Module {
 public:
  // Square images of image_size x image_size with in_channels channels (image_size >= 10);
  // `width` channels in conv1 and 2 * width in conv2 (16 and 32 above).
  explicit LeNet(int64_t in_channels = 1, int64_t image_size = 28, int64_t num_classes = 10,
                 int64_t width = 16);
  Tensor forward(const Tensor& x) override;  // [N, C, S, S] -> [N, classes]
  std::string type_name() const override { return "LeNet"; }
  std::string extra_repr() const override;

  int64_t in_channels() const { return in_channels_; }
  int64_t image_size() const { return image_size_; }
  int64_t num_classes() const { return num_classes_; }
  int64_t width() const { return width_; }  // conv1's output channels
  // 2 width * P2 * P2: the features the fc layer reads (800 for 28x28 at width 16).
  int64_t flat_features() const { return fc->in_features(); }

  std::shared_ptr<Conv2d> conv1;
  std::shared_ptr<ReLU> relu1;
  std::shared_ptr<MaxPool2d> pool1;
  std::shared_ptr<Conv2d> conv2;
  std::shared_ptr<ReLU> relu2;
  std::shared_ptr<MaxPool2d> pool2;
  std::shared_ptr<Flatten> flatten;
  std::shared_ptr<Linear> fc;

 private:
  int64_t in_channels_, image_size_, num_classes_, width_;
};

}  // namespace prism::nn
