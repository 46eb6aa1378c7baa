// The model zoo: every ready-made model by name, for the CLI (`prism summary resnet18`), the
// course and the tests.
//
//   auto model = prism::nn::make_model("resnet18", {});             // 3x224x224, 1000 classes
//   prism::nn::ModelOptions o;
//   o.image_size = 32;
//   o.num_classes = 10;
//   auto cifar = prism::nn::make_model("resnet18", o);               // small stem for 32x32
//
//   {  // a model's costs without its memory: build and run it on the meta device
//     prism::DefaultDevice meta(prism::Device::meta);
//     auto m = prism::nn::make_model("gpt2-small", {});
//     (*m)(prism::nn::default_input("gpt2-small", {}).make());      // [1, 1024] int64
//   }
//
// Names (model_names(), model_description()):
//   mlp          MLP in -> 256 -> 256 -> classes on flattened images (269,322 for MNIST)
//   cnn          LeNet-style CNN, two conv 3x3 + max pool stages and a linear head (12,810)
//   transformer  the "gpt-char" GPT: d 128, 4 heads, 4 layers, context 128
//   resnet18 / resnet34 / resnet50   torchvision's ResNets (11.7M / 21.8M / 25.6M at 1000
//                classes); an image_size <= 64 gets the small-input stem (conv 3x3 stride 1,
//                no maxpool) instead of the ImageNet one (conv 7x7 stride 2 + maxpool)
//   gpt2-small / gpt2-medium   GPT-2's 124M / 355M configurations (tied head)
// Aliases: "lenet" = cnn, "gpt-char" = transformer.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nn/module.h"

namespace prism::nn {

// What a caller may change. 0 (or a negative dropout) means the model's own default, given
// for each field; fields a model does not use are ignored.
struct ModelOptions {
  int64_t in_channels = 0;      // image channels: mlp/cnn 1, resnets 3
  int64_t image_size = 0;       // square images: mlp/cnn 28, resnets 224
  int64_t num_classes = 0;      // mlp/cnn 10, resnets 1000
  std::vector<int64_t> hidden;  // mlp hidden widths: {256, 256}
  int64_t vocab = 0;            // GPTs: the named config's (transformer 128, gpt2 50257)
  int64_t block_size = 0;       // GPTs: the named config's (transformer 128, gpt2 1024)
  double dropout = -1;          // GPTs: the named config's (0.1)
  bool tie_weights = true;      // GPTs: head = wte^T (see nn/models/gpt.h)
  bool rope = false;            // GPTs: rotary position embeddings instead of wpe
  // Scaling a model, for `prism models --match` and `prism sweep --vary width=/depth=`:
  int64_t width = 0;  // mlp: every hidden layer (256); cnn: conv1's channels, conv2 has twice
                      // as many (16); GPTs: d_model, a multiple of the heads (128 transformer)
  int64_t depth = 0;  // mlp: hidden layers (2); GPTs: transformer blocks (4 transformer)
  // A width or depth a model cannot take (depth for the cnn, either for the ResNets, width
  // beside `hidden`) is an Error naming what the model accepts.
  // Activation checkpointing (nn/layers/checkpoint.h): "" none, "blocks" (every transformer or
  // residual block), "every-N" (every N-th block: blocks 0, N, 2N, ... in forward order). The
  // GPTs and the ResNets only; any other model or value is an Error naming what is accepted.
  std::string checkpoint;
};

// The input a model takes, for summaries and smoke runs: [1, C, S, S] float32 images for the
// image models, [1, block_size] int64 token ids for the GPTs.
struct ModelInput {
  Dims shape;
  DType dtype = DType::f32;
  // A tensor of that shape on the default device: zeros (valid token ids for the GPTs).
  Tensor make() const;
};

std::shared_ptr<Module> make_model(const std::string& name, const ModelOptions& options = {});
ModelInput default_input(const std::string& name, const ModelOptions& options = {});

// True for the GPTs ("transformer", "gpt-char", "gpt2-*"): they read token ids and predict the
// next token at every position, where the other models classify an image.
bool is_language_model(const std::string& name);

// What a model trains with when the user gives nothing else: batch, learning rate and
// optimizer ("sgd" with momentum 0.9, "adam" or "adamw"); `prism train` and `prism bench` agree.
struct TrainingDefaults {
  int64_t batch = 64;
  double lr = 0.05;
  std::string optimizer = "sgd";
};
TrainingDefaults training_defaults(const std::string& name);

// The zoo's names in a stable order (aliases not included) and a one-line description of each.
std::vector<std::string> model_names();
std::string model_description(const std::string& name);

}  // namespace prism::nn
