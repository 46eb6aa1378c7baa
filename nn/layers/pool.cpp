#include "nn/layers/pool.h"

#include "tensor/ops.h"

namespace prism::nn {

namespace {
void check_config(const char* layer, int kernel, int stride, int padding) {
  if (kernel <= 0 || stride < 0 || padding < 0 || 2 * padding > kernel) {
    throw Error(std::string(layer) + ": invalid kernel=" + std::to_string(kernel) +
                ", stride=" + std::to_string(stride) + ", padding=" + std::to_string(padding) +
                " (kernel positive, stride >= 0 with 0 meaning the kernel size, and padding at "
                "most half the kernel)");
  }
}
std::string describe(int kernel, int stride, int padding) {
  return "kernel=" + std::to_string(kernel) + ", stride=" + std::to_string(stride) +
         ", padding=" + std::to_string(padding);
}
}  // namespace

MaxPool2d::MaxPool2d(int kernel_size, int stride, int padding)
    : kernel_(kernel_size), stride_(stride == 0 ? kernel_size : stride), padding_(padding) {
  check_config("MaxPool2d", kernel_size, stride, padding);
}
Tensor MaxPool2d::forward(const Tensor& x) {
  return max_pool2d(x, kernel_, stride_, padding_);
}
std::string MaxPool2d::extra_repr() const {
  return describe(kernel_, stride_, padding_);
}

AvgPool2d::AvgPool2d(int kernel_size, int stride, int padding)
    : kernel_(kernel_size), stride_(stride == 0 ? kernel_size : stride), padding_(padding) {
  check_config("AvgPool2d", kernel_size, stride, padding);
}
Tensor AvgPool2d::forward(const Tensor& x) {
  return avg_pool2d(x, kernel_, stride_, padding_);
}
std::string AvgPool2d::extra_repr() const {
  return describe(kernel_, stride_, padding_);
}

}  // namespace prism::nn
