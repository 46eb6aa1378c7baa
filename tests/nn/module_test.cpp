// Module: registration and dotted names, modes, gradients, dtype conversion, summaries, memory
// roles, and profiler scopes ("model.fc1") around every module call, forward and backward.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "nn/nn.h"
#include "profiler/memory.h"
#include "profiler/session.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/ops.h"
#include "tensor/random.h"
#include "tests/nn/nn_test_util.h"

using namespace prism;
using namespace prism::nn;

namespace {

std::vector<std::string> names_of(const NamedTensors& nt) {
  std::vector<std::string> out;
  for (const auto& [name, t] : nt) out.push_back(name);
  return out;
}

// The two-layer model the scope tests profile.
class TwoLayer : public Module {
 public:
  TwoLayer(int64_t in, int64_t hidden, int64_t out) {
    fc1 = register_module("fc1", std::make_shared<Linear>(in, hidden));
    fc2 = register_module("fc2", std::make_shared<Linear>(hidden, out));
  }
  Tensor forward(const Tensor& x) override { return (*fc2)(relu((*fc1)(x))); }
  std::string type_name() const override { return "TwoLayer"; }
  std::shared_ptr<Linear> fc1, fc2;
};

// A GPT-like skeleton, for names several levels deep.
class TinyGPT : public Module {
 public:
  TinyGPT(int64_t vocab, int64_t d, int64_t heads, int layers) {
    tok = register_module("tok", std::make_shared<Embedding>(vocab, d));
    blocks = register_module("blocks", std::make_shared<Sequential>());
    for (int i = 0; i < layers; ++i) blocks->emplace<TransformerBlock>(d, heads, true);
    ln_f = register_module("ln_f", std::make_shared<LayerNorm>(d));
    head = register_module("head", std::make_shared<Linear>(d, vocab, false));
  }
  Tensor forward(const Tensor& ids) override { return (*head)((*ln_f)((*blocks)((*tok)(ids)))); }
  std::string type_name() const override { return "TinyGPT"; }
  std::shared_ptr<Embedding> tok;
  std::shared_ptr<Sequential> blocks;
  std::shared_ptr<LayerNorm> ln_f;
  std::shared_ptr<Linear> head;
};

// A module that misuses registration, for the error tests.
class Misnamed : public Module {
 public:
  explicit Misnamed(int which) {
    if (which == 0) {
      register_parameter("w", ones({2}));
      register_parameter("w", ones({2}));
    }
    if (which == 1) register_parameter("a.b", ones({2}));
    if (which == 2) register_module("", std::make_shared<ReLU>());
    if (which == 3) {
      register_buffer("w", ones({2}));
      register_module("w", std::make_shared<ReLU>());
    }
    if (which == 4) register_parameter("ids", zeros({2}, DType::i64));
  }
  Tensor forward(const Tensor& x) override { return x; }
  std::string type_name() const override { return "Misnamed"; }
};

std::shared_ptr<Sequential> mlp(std::vector<int64_t> sizes) {
  auto seq = std::make_shared<Sequential>();
  for (size_t i = 0; i + 1 < sizes.size(); ++i) {
    seq->emplace<Linear>(sizes[i], sizes[i + 1]);
    if (i + 2 < sizes.size()) seq->emplace<ReLU>();
  }
  return seq;
}

}  // namespace

TEST_CASE("module: parameters are named by dotted paths in registration order") {
  TwoLayer m(3, 4, 2);
  CHECK(names_of(m.named_parameters()) ==
        std::vector<std::string>{"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"});
  CHECK(m.parameters().size() == 4);
  CHECK(m.parameters()[0].impl_ptr() == m.fc1->weight.impl_ptr());  // the same tensor, not a copy
  CHECK(m.named_children().size() == 2);
  CHECK(m.named_children()[1].first == "fc2");

  TinyGPT gpt(11, 8, 2, 2);
  const auto names = names_of(gpt.named_parameters());
  CHECK(names.front() == "tok.weight");
  CHECK(names.back() == "head.weight");
  for (const char* want :
       {"blocks.0.ln1.weight", "blocks.0.attn.qkv.weight", "blocks.0.attn.qkv.bias",
        "blocks.0.attn.proj.weight", "blocks.0.mlp.0.weight", "blocks.0.mlp.2.bias",
        "blocks.1.ln2.bias", "ln_f.weight"}) {
    CHECK_MESSAGE(std::find(names.begin(), names.end(), want) != names.end(), want);
  }
  // Order: block 0 entirely before block 1, attention before the MLP.
  auto pos = [&](const std::string& n) {
    return std::find(names.begin(), names.end(), n) - names.begin();
  };
  CHECK(pos("blocks.0.mlp.2.bias") < pos("blocks.1.ln1.weight"));
  CHECK(pos("blocks.0.attn.proj.bias") < pos("blocks.0.mlp.0.weight"));

  const auto modules = gpt.named_modules();
  CHECK(modules.front().first == "");
  CHECK(modules[1].first == "tok");
  CHECK(std::any_of(modules.begin(), modules.end(),
                    [](const auto& p) { return p.first == "blocks.1.attn.qkv"; }));
}

TEST_CASE("module: buffers are separate from parameters") {
  auto seq = std::make_shared<Sequential>();
  seq->emplace<Linear>(2, 3);
  seq->emplace<BatchNorm2d>(3);
  CHECK(names_of(seq->named_parameters()) ==
        std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias"});
  CHECK(names_of(seq->named_buffers()) ==
        std::vector<std::string>{"1.running_mean", "1.running_var"});
  CHECK(names_of(seq->named_state()).size() == 6);
  for (const Tensor& b : seq->buffers()) CHECK_FALSE(b.requires_grad());
  for (const Tensor& p : seq->parameters()) CHECK(p.requires_grad());
}

TEST_CASE("module: parameter counts follow the layer formulas") {
  CHECK(Linear(784, 256).parameter_count() == 784 * 256 + 256);
  CHECK(Linear(784, 256, false).parameter_count() == 784 * 256);
  CHECK(mlp({784, 256, 256, 10})->parameter_count() == 269'322);
  CHECK(LayerNorm(64).parameter_count() == 128);
  CHECK(LayerNorm(64, 1e-5, false).parameter_count() == 0);
  CHECK(BatchNorm2d(16).parameter_count() == 32);  // running stats are buffers, not parameters
  CHECK(Embedding(100, 16).parameter_count() == 1600);
  for (int64_t d : {8, 32, 64}) {
    CHECK(MultiHeadAttention(d, 4).parameter_count() == 4 * d * d + 4 * d);
    CHECK(TransformerBlock(d, 4).parameter_count() == 12 * d * d + 13 * d);
  }
  CHECK(ReLU().parameter_count() == 0);
}

TEST_CASE("module: a tensor shared by two modules is one parameter") {
  auto seq = std::make_shared<Sequential>();
  auto fc = std::make_shared<Linear>(4, 4);
  seq->push_back(fc);
  seq->emplace<ReLU>();
  seq->push_back(fc);  // the same layer twice: tied weights
  CHECK(seq->parameters().size() == 2);
  CHECK(seq->parameter_count() == 20);
  CHECK(names_of(seq->named_parameters()) == std::vector<std::string>{"0.weight", "0.bias"});
}

TEST_CASE("module: invalid registrations are refused") {
  CHECK_ERROR("the name 'w' is already registered", Misnamed(0));
  CHECK_ERROR("invalid name 'a.b'", Misnamed(1));
  CHECK_ERROR("invalid name ''", Misnamed(2));
  CHECK_ERROR("the name 'w' is already registered", Misnamed(3));
  CHECK_ERROR("must be floating point", Misnamed(4));
  CHECK_ERROR("cannot append a null module", Sequential().push_back(std::shared_ptr<Module>()));
  CHECK_ERROR("the inner module is null", Residual(nullptr));
  CHECK_ERROR("must not be empty", ReLU().set_name(""));
  CHECK_ERROR("index 3 out of range", (*mlp({2, 2}))[3]);
}

TEST_CASE("module: parameters require grad and are tagged as parameter memory") {
  const auto role = [] {
    return profiler::memory_stats(0).live_by_role[static_cast<size_t>(MemRole::parameter)];
  };
  const int64_t before = role();
  {
    Linear fc(100, 50);
    CHECK(fc.weight.requires_grad());
    CHECK(fc.weight.is_leaf());
    CHECK(fc.weight.storage()->role() == MemRole::parameter);
    CHECK(fc.bias.storage()->role() == MemRole::parameter);
    CHECK(role() - before == (100 * 50 + 50) * 4);
    BatchNorm2d bn(8);
    CHECK(bn.running_mean.storage()->role() == MemRole::parameter);
    CHECK_FALSE(bn.running_mean.requires_grad());
  }
  CHECK(role() == before);
}

TEST_CASE("module: train and eval propagate to every descendant") {
  TinyGPT gpt(5, 8, 2, 2);
  auto all = [&](bool training) {
    for (const auto& [path, m] : gpt.named_modules()) {
      if (m->is_training() != training) return false;
    }
    return true;
  };
  CHECK(all(true));
  gpt.eval();
  CHECK(all(false));
  gpt.train();
  CHECK(all(true));
  gpt.blocks->eval();  // a subtree alone
  CHECK(gpt.is_training());
  CHECK_FALSE(gpt.blocks->is_training());
  CHECK_FALSE((*gpt.blocks)[1]->is_training());
}

TEST_CASE("module: zero_grad drops every gradient") {
  TwoLayer m(3, 4, 2);
  sum(m(ones({5, 3}))).backward();
  for (const Tensor& p : m.parameters()) CHECK(p.grad().defined());
  m.zero_grad();
  for (const Tensor& p : m.parameters()) CHECK_FALSE(p.grad().defined());
}

TEST_CASE("module: to(float64) converts in place of the handles") {
  auto seq = std::make_shared<Sequential>();
  auto fc = seq->emplace<Linear>(3, 2);
  auto bn = seq->emplace<BatchNorm2d>(2);
  const std::vector<double> w32 = fc->weight.to_vector();
  Tensor held = fc->weight;  // as an optimizer would hold it
  sum((*fc)(ones({1, 3}))).backward();
  seq->to(DType::f64);
  CHECK(held.dtype() == DType::f64);
  CHECK(fc->weight.dtype() == DType::f64);
  CHECK(seq->parameters()[0].dtype() == DType::f64);
  CHECK(bn->running_var.dtype() == DType::f64);
  CHECK(held.to_vector() == w32);  // float32 values are exact in float64
  CHECK(held.requires_grad());
  CHECK(held.is_leaf());
  CHECK_FALSE(held.grad().defined());
  CHECK(held.storage()->role() == MemRole::parameter);
  Tensor y = (*fc)(ones({1, 3}, DType::f64));
  CHECK(y.dtype() == DType::f64);
  seq->to(DType::f32);
  CHECK(held.to_vector() == w32);
  CHECK_ERROR("must stay floating point", seq->to(DType::i64));
}

TEST_CASE("module: the same seed builds the same weights") {
  manual_seed(7);
  TinyGPT a(13, 8, 2, 1);
  manual_seed(7);
  TinyGPT b(13, 8, 2, 1);
  const auto pa = a.parameters(), pb = b.parameters();
  REQUIRE(pa.size() == pb.size());
  for (size_t i = 0; i < pa.size(); ++i) CHECK(pa[i].to_vector() == pb[i].to_vector());
  TinyGPT c(13, 8, 2, 1);  // the generator moved on
  CHECK(a.tok->weight.to_vector() != c.tok->weight.to_vector());
}

TEST_CASE("module: Kaiming-uniform init stays inside its bound and fills it") {
  // b = sqrt(6 / ((1 + a^2) fan_in)) with a = sqrt(5) is 1/sqrt(fan_in).
  CHECK(init::kaiming_uniform_bound(100) == doctest::Approx(0.1));
  CHECK(init::kaiming_uniform_bound(50, 0) == doctest::Approx(std::sqrt(6.0 / 50)));
  CHECK(init::fan_in({16, 3, 5, 5}) == 75);
  CHECK_ERROR("at least 2 dims", init::fan_in({4}));
  Linear fc(400, 300);
  const double bound = 1.0 / 20;
  const std::vector<double> w = fc.weight.to_vector();
  const auto [lo, hi] = std::minmax_element(w.begin(), w.end());
  CHECK(*lo >= -bound);
  CHECK(*hi < bound);
  CHECK(*lo < -0.99 * bound);  // 120,000 draws reach the edges
  CHECK(*hi > 0.99 * bound);
  double m = 0, v = 0;
  for (double x : w) m += x, v += x * x;
  m /= static_cast<double>(w.size());
  v /= static_cast<double>(w.size());
  CHECK(std::abs(m) < 1e-3);
  CHECK(v == doctest::Approx(bound * bound / 3).epsilon(0.02));  // U(-b, b): variance b^2/3
  for (double x : fc.bias.to_vector()) CHECK(std::abs(x) <= bound);
}

TEST_CASE("module: tree prints names, types, configuration and parameter counts") {
  auto model = mlp({784, 256, 256, 10});
  const std::string tree = model->tree();
  INFO(tree);
  CHECK(tree.find("model: Sequential") == 0);
  CHECK(tree.find("params 269,322") != std::string::npos);
  CHECK(tree.find("  0: Linear(in=784, out=256, bias=true)") != std::string::npos);
  CHECK(tree.find("params 200,960") != std::string::npos);
  CHECK(tree.find("  1: ReLU\n") != std::string::npos);
  CHECK(std::count(tree.begin(), tree.end(), '\n') == 6);
  model->set_name("mlp");
  CHECK(model->tree().find("mlp: Sequential") == 0);
  std::ostringstream os;
  os << TransformerBlock(8, 2);
  CHECK(os.str().find("    qkv: Linear(in=8, out=24, bias=true)") != std::string::npos);
  CHECK(os.str().find("attn: MultiHeadAttention(d_model=8, heads=2, causal=true)") !=
        std::string::npos);

  std::vector<int> depths;
  model->walk([&](const std::string&, const Module&, int depth) { depths.push_back(depth); });
  CHECK(depths == std::vector<int>{0, 1, 1, 1, 1, 1});
}

TEST_CASE("module: ops run under the module path, forward and backward") {
  TwoLayer m(3, 4, 2);
  Tensor x = ones({5, 3});
  profiler::Session session;
  Tensor loss = sum(m(x));
  loss.backward();
  const profiler::Profile& p = session.stop();
  const auto& paths = p.recording.scope_paths;
  std::multiset<std::string> fwd_matmul, bwd_matmul, scopes;
  std::set<std::string> relu_paths;
  for (const profiler::OpRecord& r : p.recording.records) {
    const std::string& path = paths.at(static_cast<size_t>(r.scope));
    if (r.kind == profiler::Kind::scope) {
      scopes.insert(path);
      continue;
    }
    if (std::string(r.op) == "matmul") {
      (r.phase == profiler::Phase::forward ? fwd_matmul : bwd_matmul).insert(path);
    }
    if (std::string(r.op) == "relu") relu_paths.insert(path);
  }
  CHECK(fwd_matmul == std::multiset<std::string>{"model.fc1", "model.fc2"});
  // Each layer's backward computes dX and dW with matmuls, attributed to the same module
  // (fc1's input needs no gradient, so fc1 runs only dW).
  CHECK(bwd_matmul.count("model.fc1") >= 1);
  CHECK(bwd_matmul.count("model.fc2") >= 2);
  CHECK(relu_paths == std::set<std::string>{"model"});  // relu is called by the model itself
  CHECK(scopes == std::multiset<std::string>{"model", "model.fc1", "model.fc2"});
}

TEST_CASE("module: scope paths follow the registered names through containers") {
  TinyGPT gpt(7, 8, 2, 2);
  gpt.set_name("gpt");
  Tensor ids = from_vector(std::vector<int64_t>{1, 2, 3}, {1, 3});
  profiler::Session session;
  (void)gpt(ids);
  const profiler::Profile& p = session.stop();
  std::set<std::string> op_paths;
  for (const profiler::OpRecord& r : p.recording.records) {
    if (r.kind == profiler::Kind::op) {
      op_paths.insert(p.recording.scope_paths.at(static_cast<size_t>(r.scope)));
    }
  }
  // (The MLP's Linear and GELU, "mlp.0" and "mlp.1", run as one linear_gelu op in mlp.0.)
  for (const char* want :
       {"gpt.tok", "gpt.blocks.0.ln1", "gpt.blocks.0.attn", "gpt.blocks.0.attn.qkv",
        "gpt.blocks.1.attn.proj", "gpt.blocks.1.mlp.0", "gpt.blocks.1.mlp.2", "gpt.head"}) {
    CHECK_MESSAGE(op_paths.count(want) == 1, want);
  }
  // Nothing ran outside the model.
  for (const std::string& path : op_paths) CHECK(path.rfind("gpt", 0) == 0);
}

TEST_CASE("module: assign writes new values behind the same handle") {
  Linear fc(2, 2);
  Tensor held = fc.weight;
  {
    NoGrad no_grad;
    assign(fc.weight, fc.weight * 0.0 + 3.0);
  }
  CHECK(held.to_vector() == std::vector<double>(4, 3.0));
  CHECK(held.storage()->role() == MemRole::parameter);
  CHECK(held.requires_grad());
  // A source that something else can see is copied, not shared.
  Tensor src = full({2, 2}, 5.0);
  Tensor other_view = src.reshape({4});
  assign(fc.weight, src);
  CHECK_FALSE(fc.weight.shares_storage_with(src));
  CHECK(held.to_vector() == std::vector<double>(4, 5.0));
  CHECK_ERROR("assign: cannot write a float32 [3] tensor into a float32 [2,2] one",
              assign(fc.weight, ones({3})));
  CHECK_ERROR("assign: cannot write a float64", assign(fc.weight, ones({2, 2}, DType::f64)));
}
