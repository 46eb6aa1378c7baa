#include "nn/models/zoo.h"

#include <functional>

#include "nn/layers/checkpoint.h"
#include "nn/models/gpt.h"
#include "nn/models/lenet.h"
#include "nn/models/mlp.h"
#include "nn/models/resnet.h"
#include "tensor/ops.h"

namespace prism::nn {

namespace {

// Image models: channels, size and classes with the model's defaults filled in.
struct ImageSpec {
  int64_t channels, size, classes;
};

ImageSpec image_spec(const ModelOptions& o, ImageSpec defaults) {
  return {o.in_channels > 0 ? o.in_channels : defaults.channels,
          o.image_size > 0 ? o.image_size : defaults.size,
          o.num_classes > 0 ? o.num_classes : defaults.classes};
}

constexpr ImageSpec kMnist{1, 28, 10};
constexpr ImageSpec kImageNet{3, 224, 1000};
// Images up to this size get the ResNet stem for small inputs (conv 3x3 stride 1, no maxpool):
// the ImageNet stem divides by 4 before the first block, leaving a 32x32 image at 8x8.
constexpr int64_t kSmallStemMaxSize = 64;

GPTConfig gpt_spec(const std::string& config_name, const ModelOptions& o) {
  GPTConfig c = gpt_config(config_name);
  if (o.vocab > 0) c.vocab = o.vocab;
  if (o.block_size > 0) c.block_size = o.block_size;
  if (o.dropout >= 0) c.dropout = o.dropout;
  c.tie_weights = o.tie_weights;
  c.rope = o.rope;
  if (o.width > 0) {
    if (o.width % c.heads != 0) {
      throw Error("make_model(" + config_name + "): width (d_model) " + std::to_string(o.width) +
                  " must be a multiple of the " + std::to_string(c.heads) + " heads");
    }
    c.d_model = o.width;
  }
  if (o.depth > 0) c.layers = o.depth;
  return c;
}

ModelInput image_input(const ModelOptions& o, ImageSpec defaults) {
  const ImageSpec s = image_spec(o, defaults);
  return {Dims{1, s.channels, s.size, s.size}, DType::f32};
}

using ResNetFactory = std::shared_ptr<ResNet> (*)(int64_t, int64_t, bool);

std::shared_ptr<Module> make_resnet(ResNetFactory f, const ModelOptions& o) {
  const ImageSpec s = image_spec(o, kImageNet);
  return f(s.classes, s.channels, s.size <= kSmallStemMaxSize);
}

struct Entry {
  const char* name;
  const char* description;
  std::function<std::shared_ptr<Module>(const ModelOptions&)> make;
  std::function<ModelInput(const ModelOptions&)> input;
};

const std::vector<Entry>& entries() {
  auto gpt_input = [](const char* config) {
    return [config](const ModelOptions& o) {
      return ModelInput{Dims{1, gpt_spec(config, o).block_size}, DType::i64};
    };
  };
  auto gpt_make = [](const char* config) {
    return [config](const ModelOptions& o) -> std::shared_ptr<Module> {
      return std::make_shared<GPT>(gpt_spec(config, o));
    };
  };
  static const std::vector<Entry> list = {
      {"mlp", "MLP on flattened images: in -> 256 -> 256 -> classes, ReLU (MNIST: 269,322)",
       [](const ModelOptions& o) -> std::shared_ptr<Module> {
         const ImageSpec s = image_spec(o, kMnist);
         std::vector<int64_t> sizes{s.channels * s.size * s.size};
         std::vector<int64_t> hidden = o.hidden;
         if (hidden.empty()) {
           hidden.assign(o.depth > 0 ? o.depth : 2, o.width > 0 ? o.width : 256);
         }
         sizes.insert(sizes.end(), hidden.begin(), hidden.end());
         sizes.push_back(s.classes);
         return std::make_shared<MLP>(sizes);
       },
       [](const ModelOptions& o) { return image_input(o, kMnist); }},
      {"cnn", "LeNet-style CNN: conv 3x3 16, pool, conv 3x3 32, pool, linear (MNIST: 12,810)",
       [](const ModelOptions& o) -> std::shared_ptr<Module> {
         const ImageSpec s = image_spec(o, kMnist);
         return std::make_shared<LeNet>(s.channels, s.size, s.classes, o.width > 0 ? o.width : 16);
       },
       [](const ModelOptions& o) { return image_input(o, kMnist); }},
      {"transformer", "character GPT (gpt-char): d 128, 4 heads, 4 layers, context 128, vocab 128",
       gpt_make("gpt-char"), gpt_input("gpt-char")},
      {"resnet18", "ResNet-18, basic blocks [2,2,2,2] (3x224x224, 1000 classes: 11,689,512)",
       [](const ModelOptions& o) { return make_resnet(&resnet18, o); },
       [](const ModelOptions& o) { return image_input(o, kImageNet); }},
      {"resnet34", "ResNet-34, basic blocks [3,4,6,3] (3x224x224, 1000 classes: 21,797,672)",
       [](const ModelOptions& o) { return make_resnet(&resnet34, o); },
       [](const ModelOptions& o) { return image_input(o, kImageNet); }},
      {"resnet50", "ResNet-50, bottlenecks [3,4,6,3] (3x224x224, 1000 classes: 25,557,032)",
       [](const ModelOptions& o) { return make_resnet(&resnet50, o); },
       [](const ModelOptions& o) { return image_input(o, kImageNet); }},
      {"gpt2-small", "GPT-2 small: d 768, 12 heads, 12 layers, context 1024 (124,439,808 tied)",
       gpt_make("gpt2-small"), gpt_input("gpt2-small")},
      {"gpt2-medium", "GPT-2 medium: d 1024, 16 heads, 24 layers, context 1024 (354,823,168 tied)",
       gpt_make("gpt2-medium"), gpt_input("gpt2-medium")},
  };
  return list;
}

std::string canonical(const std::string& name) {
  if (name == "lenet") return "cnn";
  if (name == "gpt-char") return "transformer";
  return name;
}

const Entry& find(const char* caller, const std::string& name) {
  const std::string key = canonical(name);
  for (const auto& e : entries()) {
    if (key == e.name) return e;
  }
  std::string known;
  for (const auto& e : entries()) {
    if (!known.empty()) known += ", ";
    known += e.name;
  }
  throw Error(std::string(caller) + ": unknown model '" + name + "'; known models: " + known +
              " (aliases: lenet = cnn, gpt-char = transformer)");
}

void check_options(const std::string& name, const ModelOptions& o) {
  auto non_negative = [&](const char* field, int64_t v) {
    if (v < 0) {
      throw Error("make_model(" + name + "): " + field + " must be positive, or 0 for the " +
                  "model's default; got " + std::to_string(v));
    }
  };
  non_negative("in_channels", o.in_channels);
  non_negative("image_size", o.image_size);
  non_negative("num_classes", o.num_classes);
  non_negative("vocab", o.vocab);
  non_negative("block_size", o.block_size);
  non_negative("width", o.width);
  non_negative("depth", o.depth);
  const std::string key = canonical(name);
  const bool gpt = is_language_model(key);
  if (o.depth > 0 && key != "mlp" && !gpt) {
    throw Error("make_model(" + name + "): depth is fixed for this model; depth scales the " +
                "mlp (hidden layers) and the GPTs (transformer blocks)");
  }
  if (o.width > 0 && key != "mlp" && key != "cnn" && !gpt) {
    throw Error("make_model(" + name + "): width is fixed for this model; width scales the " +
                "mlp (hidden units), the cnn (conv channels) and the GPTs (d_model)");
  }
  if (key == "mlp" && !o.hidden.empty() && (o.width > 0 || o.depth > 0)) {
    throw Error("make_model(mlp): give the hidden widths or width/depth, not both");
  }
  constexpr int64_t kMaxWidth = int64_t{1} << 16, kMaxDepth = 1024;
  if (o.width > kMaxWidth) {
    throw Error("make_model(" + name + "): width " + std::to_string(o.width) +
                " is past the largest allowed, " + std::to_string(kMaxWidth));
  }
  if (o.depth > kMaxDepth) {
    throw Error("make_model(" + name + "): depth " + std::to_string(o.depth) +
                " is past the largest allowed, " + std::to_string(kMaxDepth));
  }
  if (checkpoint_stride(o.checkpoint, "make_model(" + name + ")") > 0 && !gpt &&
      key.rfind("resnet", 0) != 0) {
    throw Error("make_model(" + name + "): checkpoint '" + o.checkpoint +
                "' needs a model made of blocks; it applies to the GPTs (transformer, gpt2-*: " +
                "transformer blocks) and the ResNets (resnet18/34/50: residual blocks)");
  }
}

// The blocks activation checkpointing chooses from, in forward order: the GPTs' transformer
// blocks, the ResNets' residual blocks over all four stages.
std::vector<Module*> checkpointable_blocks(Module& model) {
  std::vector<Module*> out;
  auto add_all = [&](const Sequential& seq) {
    for (size_t i = 0; i < seq.size(); ++i) out.push_back(seq[i].get());
  };
  if (auto* gpt = dynamic_cast<GPT*>(&model)) add_all(*gpt->blocks);
  if (auto* r = dynamic_cast<ResNet*>(&model)) {
    for (const auto* stage : {&r->layer1, &r->layer2, &r->layer3, &r->layer4}) add_all(**stage);
  }
  return out;
}

// Marks blocks 0, N, 2N, ... (N from ModelOptions::checkpoint) as checkpointed.
void apply_checkpointing(Module& model, const std::string& name, const std::string& spec) {
  const int64_t every = checkpoint_stride(spec, "make_model(" + name + ")");
  if (every == 0) return;
  const std::vector<Module*> blocks = checkpointable_blocks(model);
  for (size_t i = 0; i < blocks.size(); i += static_cast<size_t>(every)) {
    blocks[i]->set_checkpointed(true);
  }
}

}  // namespace

Tensor ModelInput::make() const {
  return zeros(shape, dtype);
}

std::shared_ptr<Module> make_model(const std::string& name, const ModelOptions& options) {
  const Entry& e = find("make_model", name);
  check_options(name, options);
  std::shared_ptr<Module> model = e.make(options);
  apply_checkpointing(*model, name, options.checkpoint);
  return model;
}

ModelInput default_input(const std::string& name, const ModelOptions& options) {
  const Entry& e = find("default_input", name);
  check_options(name, options);
  return e.input(options);
}

bool is_language_model(const std::string& name) {
  return name == "transformer" || name == "gpt-char" || name.rfind("gpt2", 0) == 0;
}

TrainingDefaults training_defaults(const std::string& name) {
  if (is_language_model(name)) return {32, 3e-3, "adamw"};
  if (name == "mlp") return {128, 0.05, "sgd"};
  return {64, 0.05, "sgd"};  // cnn, resnets
}

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const auto& e : entries()) names.emplace_back(e.name);
  return names;
}

std::string model_description(const std::string& name) {
  return find("model_description", name).description;
}

}  // namespace prism::nn
