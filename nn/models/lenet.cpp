#include "nn/models/lenet.h"

namespace prism::nn {

LeNet::LeNet(int64_t in_channels, int64_t image_size, int64_t num_classes, int64_t width)
    : in_channels_(in_channels), image_size_(image_size), num_classes_(num_classes), width_(width) {
  if (in_channels <= 0 || num_classes <= 0 || width <= 0) {
    throw Error("LeNet: in_channels, num_classes and width must be positive (" + extra_repr() +
                ")");
  }
  if (image_size < 10) {
    throw Error("LeNet: image_size " + std::to_string(image_size) +
                " is too small; two conv 3x3 + max pool 2 stages need at least 10");
  }
  // Spatial sizes through the stack (see the header): conv 3x3 takes 2 off, pool 2 halves.
  const int64_t p1 = (image_size - 2) / 2;
  const int64_t p2 = (p1 - 2) / 2;
  conv1 = register_module("conv1", std::make_shared<Conv2d>(in_channels, width, 3));
  relu1 = register_module("relu1", std::make_shared<ReLU>());
  pool1 = register_module("pool1", std::make_shared<MaxPool2d>(2));
  conv2 = register_module("conv2", std::make_shared<Conv2d>(width, 2 * width, 3));
  relu2 = register_module("relu2", std::make_shared<ReLU>());
  pool2 = register_module("pool2", std::make_shared<MaxPool2d>(2));
  flatten = register_module("flatten", std::make_shared<Flatten>(1, -1));
  fc = register_module("fc", std::make_shared<Linear>(2 * width * p2 * p2, num_classes));
}

Tensor LeNet::forward(const Tensor& x) {
  // The fc layer is sized for one image size, so the input must have exactly that size.
  if (x.dim() != 4 || x.size(1) != in_channels_ || x.size(2) != image_size_ ||
      x.size(3) != image_size_) {
    throw Error("LeNet(" + extra_repr() + "): input " + x.shape().str() + " must be [N, " +
                std::to_string(in_channels_) + ", " + std::to_string(image_size_) + ", " +
                std::to_string(image_size_) + "]");
  }
  Tensor h = (*pool1)((*relu1)((*conv1)(x)));  // [N, width, P1, P1]
  h = (*pool2)((*relu2)((*conv2)(h)));         // [N, 2 width, P2, P2]
  return (*fc)((*flatten)(h));                 // [N, 2 width P2 P2] -> [N, classes]
}

std::string LeNet::extra_repr() const {
  return "in_channels=" + std::to_string(in_channels_) + ", image=" + std::to_string(image_size_) +
         "x" + std::to_string(image_size_) + ", classes=" + std::to_string(num_classes_) +
         (width_ == 16 ? "" : ", width=" + std::to_string(width_));
}

}  // namespace prism::nn
