#include "cli/train_data.h"

#include "cli/commands.h"

#include <filesystem>

#include "nn/data/idx.h"
#include "nn/data/synthetic.h"

namespace prism::cli {

namespace {

namespace fs = std::filesystem;
using nn::data::TensorDataset;

bool is_text_model(const std::string& model) {
  return model == "transformer" || model.rfind("gpt", 0) == 0;
}

TrainData images(std::string name, TensorDataset train, TensorDataset test, int64_t classes) {
  TrainData d;
  d.name = std::move(name);
  d.task = Task::classify;
  d.train = std::make_shared<TensorDataset>(std::move(train));
  d.test = std::make_shared<TensorDataset>(std::move(test));
  d.num_classes = classes;
  return d;
}

TrainData text(std::string name, const nn::data::CharDataset& all) {
  TrainData d;
  d.name = std::move(name);
  d.task = Task::next_char;
  auto [train, val] = all.split(0.9);
  d.text = std::make_shared<nn::data::CharDataset>(train);
  d.train = d.text;
  d.test = std::make_shared<nn::data::CharDataset>(val);
  d.num_classes = all.vocab_size();
  d.unigram_entropy_nats = train.unigram_entropy_nats();
  return d;
}

}  // namespace

TrainData load_train_data(const std::string& spec_in, const std::string& model, int64_t block_size,
                          uint64_t seed) {
  std::string spec = spec_in;
  if (spec.empty()) {
    if (is_text_model(model))
      spec = "text";
    else if (model == "mlp-spiral")
      spec = "spirals";
    else
      spec = nn::data::fashion_mnist_available() ? "fashion-mnist" : "shapes";
  }
  // Whether the model can read this data is known from the names alone: said before anything
  // is loaded, in the same words for every command (a text set built for an image model would
  // fail first on a block size it never needed).
  std::error_code ec;
  const bool text_data = spec == "text" || fs::is_regular_file(spec, ec);
  const bool known = text_data || spec == "fashion-mnist" || spec == "shapes" ||
                     spec == "spirals" || fs::is_directory(spec, ec);
  if (known && text_data && !nn::is_language_model(model)) {
    throw UsageError("model '" + model + "' classifies images; text data needs a transformer");
  }
  if (known && !text_data && nn::is_language_model(model)) {
    throw UsageError("model '" + model + "' reads text; use --data text or a text file");
  }
  if (spec == "fashion-mnist") {
    const std::string dir = nn::data::fashion_mnist_dir();
    if (!nn::data::fashion_mnist_available(dir)) {
      throw Error("--data fashion-mnist: no Fashion-MNIST files in " + dir +
                  " (install the Debian package dataset-fashion-mnist, or use --data shapes)");
    }
    return images("fashion-mnist (" + dir + ")", nn::data::fashion_mnist(dir, true),
                  nn::data::fashion_mnist(dir, false), 10);
  }
  if (spec == "shapes") {
    return images("shapes (generated 28x28 images, 10 classes)", nn::data::shapes(12000, seed),
                  nn::data::shapes(2000, seed + 1), 10);
  }
  if (spec == "spirals") {
    return images("spirals (generated, 3 classes)", nn::data::spirals(1000, 3, 0.2, seed),
                  nn::data::spirals(200, 3, 0.2, seed + 1), 3);
  }
  if (spec == "text") {
    return text("text (built in)", nn::data::CharDataset(nn::data::default_text(), block_size));
  }
  if (fs::is_directory(spec, ec)) {
    if (!nn::data::fashion_mnist_available(spec)) {
      throw Error("--data " + spec +
                  ": no MNIST-format files (train-images-idx3-ubyte[.gz], ...) in it");
    }
    return images("MNIST-format files (" + spec + ")", nn::data::fashion_mnist(spec, true),
                  nn::data::fashion_mnist(spec, false), 10);
  }
  if (fs::is_regular_file(spec, ec)) {
    return text("text (" + spec + ")", nn::data::CharDataset::from_file(spec, block_size));
  }
  throw Error("--data '" + spec +
              "': not a data set name (fashion-mnist, shapes, spirals, text), a directory of "
              "MNIST-format files, or a text file");
}

nn::ModelOptions model_options_for(const TrainData& data, const std::string& model,
                                   nn::ModelOptions mo) {
  const nn::data::ExampleSpec spec = data.train->spec();
  if (data.task == Task::next_char) {  // a language model: load_train_data checked it
    mo.vocab = data.num_classes;
    return mo;
  }
  mo.num_classes = data.num_classes;
  if (spec.input_shape.size() == 3) {
    mo.in_channels = spec.input_shape[0];
    mo.image_size = spec.input_shape[1];
  } else if (model != "mlp") {
    throw UsageError("model '" + model + "' needs images; " + data.name + " has inputs " +
                     spec.input_shape.str() + " (use the mlp)");
  } else {
    // Flat inputs (spiral points): the MLP's input width is channels x 1 x 1.
    mo.in_channels = spec.input_shape.numel();
    mo.image_size = 1;
  }
  return mo;
}

void check_checkpoint_flag(const std::string& model, const std::string& value) {
  if (value.empty()) return;
  nn::ModelOptions mo;
  mo.checkpoint = value;
  try {
    nn::default_input(model, mo);  // make_model's checks, without building the model
  } catch (const Error& e) {
    throw UsageError(std::string("--checkpoint: ") + e.what());
  }
}

void check_model_name(const std::string& model) {
  try {
    nn::default_input(model);
  } catch (const Error&) {
    std::string names;
    for (const std::string& n : nn::model_names()) names += (names.empty() ? "" : ", ") + n;
    throw UsageError("unknown model '" + model + "' (models: " + names + ")");
  }
}

}  // namespace prism::cli
