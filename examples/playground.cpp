// playground: prism used as a library, in one file. It builds a small CNN from nn/ layers,
// trains it on generated images of ten shapes, measures its test accuracy, then profiles five
// training steps and prints the op table, the one `prism demo` prints.
//
//   cmake --build build --target prism_example_playground
//   build/examples/playground [steps]        (default 300: about a second, ~90% accuracy)
//
// Copy this file to start a program of your own (examples/README.md says how).
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "nn/data/loader.h"
#include "nn/data/synthetic.h"
#include "nn/nn.h"
#include "nn/optim/sgd.h"
#include "profiler/reports.h"
#include "profiler/session.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/ops.h"
#include "tensor/random.h"

using namespace prism;

// Two conv -> relu -> pool stages, then a linear classifier. Shapes for a batch of N images:
// [N,1,28,28] -> [N,8,28,28] -> [N,8,14,14] -> [N,16,14,14] -> [N,16,7,7] -> [N,784] -> [N,10].
std::shared_ptr<nn::Sequential> make_model() {
  auto m = std::make_shared<nn::Sequential>();
  m->emplace<nn::Conv2d>(1, 8, /*kernel_size=*/3, /*stride=*/1, /*padding=*/1);
  m->emplace<nn::ReLU>();
  m->emplace<nn::MaxPool2d>(2);
  m->emplace<nn::Conv2d>(8, 16, 3, 1, 1);
  m->emplace<nn::ReLU>();
  m->emplace<nn::MaxPool2d>(2);
  m->emplace<nn::Flatten>();
  m->emplace<nn::Linear>(16 * 7 * 7, 10);  // logits: cross_entropy applies the softmax
  return m;
}

// One step of gradient descent on a batch; returns the batch's mean loss.
double train_step(nn::Module& model, nn::optim::SGD& opt, const nn::data::Batch& batch) {
  Tensor loss = cross_entropy(model(batch.input), batch.target);
  loss.backward();  // fills .grad of every parameter
  opt.step();       // p -= lr * v, with v the momentum-smoothed gradient
  opt.zero_grad();
  return loss.item<double>();
}

// The fraction of `data` whose highest logit is the right class.
double accuracy(nn::Module& model, const nn::data::Dataset& data) {
  NoGrad no_grad;  // evaluation builds no autograd graph
  int64_t correct = 0;
  for (auto& batch : nn::data::DataLoader(data, /*batch_size=*/250)) {
    const auto predicted = argmax(model(batch.input), /*dim=*/1).to_vector<int64_t>();
    const auto label = batch.target.to_vector<int64_t>();
    for (size_t i = 0; i < label.size(); ++i) correct += predicted[i] == label[i];
  }
  return static_cast<double>(correct) / static_cast<double>(data.size());
}

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 300;
  if (steps < 1) {
    std::fprintf(stderr, "usage: playground [steps, at least 1]\n");
    return 2;
  }
  manual_seed(0);  // the initial weights
  const nn::data::TensorDataset train = nn::data::shapes(3200, /*seed=*/1);
  const nn::data::TensorDataset test = nn::data::shapes(1000, /*seed=*/2);
  auto model = make_model();
  nn::optim::SGD opt(model->parameters(), /*lr=*/0.05, /*momentum=*/0.9);
  nn::data::DataLoader loader(train, {.batch_size = 32, .shuffle = true, .seed = 1});

  std::printf("training a CNN of %lld parameters on generated shapes, %d steps\n",
              static_cast<long long>(model->parameter_count()), steps);
  for (int step = 1; step <= steps;) {
    for (auto& batch : loader) {  // one epoch per pass of this loop
      const double loss = train_step(*model, opt, batch);
      if (step % 50 == 0 || step == steps) std::printf("step %3d  loss %.3f\n", step, loss);
      if (++step > steps) break;
    }
  }
  std::printf("test accuracy: %.1f%%\n\n", 100 * accuracy(*model, test));

  // Everything between the session's start and stop is recorded: every op, forward, backward
  // and optimizer, with its time, FLOPs, bytes and the kernel variant that ran.
  profiler::Session session;
  for (int i = 0; i < 5; ++i) train_step(*model, opt, *loader.next());
  std::printf("%s", profiler::format_table(session.stop(), {.max_rows = 12}).c_str());
  return 0;
}
