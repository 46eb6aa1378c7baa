// The layers: values against hand-written references, float64 gradient checks of each layer
// with respect to its input and every parameter, training vs evaluation behaviour, and the
// errors a wrong input gets.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "nn/nn.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/ops.h"
#include "tensor/random.h"
#include "tests/nn/nn_test_util.h"

using namespace prism;
using namespace prism::nn;
using prism::nn::test::all_close;
using prism::nn::test::gradcheck_module;
using prism::nn::test::leaf64;

namespace {

// Plain-loop references on row-major std::vectors.
using Vec = std::vector<double>;

// y[r][o] = sum_i x[r][i] w[o][i] + b[o]
Vec linear_ref(const Vec& x, const Vec& w, const Vec& b, int64_t rows, int64_t in, int64_t out) {
  Vec y(static_cast<size_t>(rows * out));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t o = 0; o < out; ++o) {
      double acc = b.empty() ? 0 : b[static_cast<size_t>(o)];
      for (int64_t i = 0; i < in; ++i) {
        acc += x[static_cast<size_t>(r * in + i)] * w[static_cast<size_t>(o * in + i)];
      }
      y[static_cast<size_t>(r * out + o)] = acc;
    }
  }
  return y;
}

double at(const Vec& v, int64_t i) {
  return v[static_cast<size_t>(i)];
}

// Self-attention of one sequence x [T, D] with H heads, straight from the definition.
Vec attention_ref(const MultiHeadAttention& mha, const Vec& x, int64_t t, int64_t d_model,
                  int64_t heads, bool causal) {
  const int64_t hd = d_model / heads;
  const Vec qkv = linear_ref(x, mha.qkv->weight.to_vector(), mha.qkv->bias.to_vector(), t, d_model,
                             3 * d_model);
  Vec o(static_cast<size_t>(t * d_model), 0.0);
  for (int64_t h = 0; h < heads; ++h) {
    // q, k, v of head h: columns [h*hd, (h+1)*hd) of each third of qkv.
    auto q = [&](int64_t i, int64_t c) { return at(qkv, i * 3 * d_model + h * hd + c); };
    auto k = [&](int64_t i, int64_t c) { return at(qkv, i * 3 * d_model + d_model + h * hd + c); };
    auto v = [&](int64_t i, int64_t c) {
      return at(qkv, i * 3 * d_model + 2 * d_model + h * hd + c);
    };
    for (int64_t i = 0; i < t; ++i) {
      Vec s(static_cast<size_t>(t), -std::numeric_limits<double>::infinity());
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < t; ++j) {
        if (causal && j > i) continue;
        double dot = 0;
        for (int64_t c = 0; c < hd; ++c) dot += q(i, c) * k(j, c);
        s[static_cast<size_t>(j)] = dot / std::sqrt(static_cast<double>(hd));
        mx = std::max(mx, s[static_cast<size_t>(j)]);
      }
      double z = 0;
      for (double& e : s) z += (e = std::exp(e - mx));
      for (int64_t c = 0; c < hd; ++c) {
        double acc = 0;
        for (int64_t j = 0; j < t; ++j) acc += at(s, j) / z * v(j, c);
        o[static_cast<size_t>(i * d_model + h * hd + c)] = acc;
      }
    }
  }
  return linear_ref(o, mha.proj->weight.to_vector(), mha.proj->bias.to_vector(), t, d_model,
                    d_model);
}

}  // namespace

// ---- Linear -------------------------------------------------------------------------------------

TEST_CASE("layers: Linear computes x W^T + b on 2-d and batched input") {
  manual_seed(1);
  Linear fc(5, 3);
  CHECK(fc.weight.shape() == Dims{3, 5});
  CHECK(fc.bias.shape() == Dims{3});
  Tensor x = randn({4, 5});
  const Vec ref = linear_ref(x.to_vector(), fc.weight.to_vector(), fc.bias.to_vector(), 4, 5, 3);
  CHECK(all_close(fc(x), from_vector(ref, {4, 3})));
  // [2, 2, 5]: the leading dims are batch dims.
  Tensor y = fc(x.reshape({2, 2, 5}));
  CHECK(y.shape() == Dims{2, 2, 3});
  CHECK(all_close(y.reshape({4, 3}), from_vector(ref, {4, 3})));
  Linear nob(5, 3, false);
  CHECK_FALSE(nob.bias.defined());
  CHECK(all_close(
      nob(x), from_vector(linear_ref(x.to_vector(), nob.weight.to_vector(), {}, 4, 5, 3), {4, 3})));
  CHECK_ERROR("Linear(5 -> 3): input [4,6] must end in 5 features", fc(ones({4, 6})));
  CHECK_ERROR("Linear: sizes must be positive", Linear(0, 3));
}

TEST_CASE("layers: gradcheck Linear with and without bias") {
  manual_seed(2);
  Linear fc(4, 3);
  CHECK_GRADCHECK(gradcheck_module(fc, leaf64({2, 4})));
  Linear nob(4, 3, false);
  CHECK_GRADCHECK(gradcheck_module(nob, leaf64({2, 3, 4})));
}

// ---- activations, Flatten, Sequential, Residual ------------------------------------------------

TEST_CASE("layers: activation modules are their ops") {
  Tensor x = randn({3, 4});
  CHECK(ReLU()(x).to_vector() == relu(x).to_vector());
  CHECK(GELU()(x).to_vector() == gelu(x).to_vector());
  CHECK(Tanh()(x).to_vector() == prism::tanh(x).to_vector());
  CHECK(Sigmoid()(x).to_vector() == sigmoid(x).to_vector());
  CHECK(SiLU()(x).to_vector() == silu(x).to_vector());
  CHECK(SiLU().type_name() == "SiLU");
}

TEST_CASE("layers: Flatten merges all but the batch dim") {
  Tensor x = randn({2, 3, 4, 5});
  CHECK(Flatten()(x).shape() == Dims{2, 60});
  CHECK(Flatten(0)(x).shape() == Dims{120});
  CHECK(Flatten(1, 2)(x).shape() == Dims{2, 12, 5});
  CHECK(Flatten()(x).shares_storage_with(x));  // a view
}

TEST_CASE("layers: Sequential numbers its children and runs them in order") {
  Sequential seq{std::make_shared<Linear>(3, 4), std::make_shared<Tanh>(),
                 std::make_shared<Linear>(4, 2)};
  CHECK(seq.size() == 3);
  auto children = seq.named_children();
  CHECK(children[0].first == "0");
  CHECK(children[2].first == "2");
  CHECK(seq[1]->name() == "1");
  CHECK(seq[1]->type_name() == "Tanh");
  Tensor x = randn({5, 3});
  Tensor manual = (*seq[2])(prism::tanh((*seq[0])(x)));
  CHECK(seq(x).to_vector() == manual.to_vector());
  Sequential empty;
  CHECK(empty(x).impl_ptr() == x.impl_ptr());  // no layers: the identity
}

TEST_CASE("layers: gradcheck a small MLP with every activation") {
  manual_seed(3);
  Sequential seq{std::make_shared<Linear>(3, 4), std::make_shared<GELU>(),
                 std::make_shared<Linear>(4, 4), std::make_shared<Tanh>(),
                 std::make_shared<Linear>(4, 3), std::make_shared<Sigmoid>()};
  CHECK_GRADCHECK(gradcheck_module(seq, leaf64({2, 3})));
}

TEST_CASE("layers: Residual adds its input") {
  manual_seed(4);
  auto inner = std::make_shared<Linear>(4, 4);
  Residual res(inner);
  CHECK(res.named_children()[0].first == "inner");
  Tensor x = randn({3, 4});
  CHECK(all_close(res(x), x + (*inner)(x)));
  CHECK_GRADCHECK(gradcheck_module(res, leaf64({3, 4})));
  Residual bad(std::make_shared<Linear>(4, 2));
  CHECK_ERROR("Residual: the inner module maps [3,4] to [3,2]", bad(x));
}

// ---- normalisation -----------------------------------------------------------------------------

TEST_CASE("layers: LayerNorm normalises each row over the last dim") {
  manual_seed(5);
  LayerNorm ln(6);
  Tensor x = randn({2, 3, 6}, DType::f32, 3.0, 2.0);
  const Vec y = ln(x).to_vector();
  for (int r = 0; r < 6; ++r) {
    double m = 0, v = 0;
    for (int c = 0; c < 6; ++c) m += y[static_cast<size_t>(r * 6 + c)];
    m /= 6;
    for (int c = 0; c < 6; ++c) v += std::pow(y[static_cast<size_t>(r * 6 + c)] - m, 2);
    v /= 6;
    CHECK(std::abs(m) < 1e-5);
    CHECK(v == doctest::Approx(1.0).epsilon(1e-3));  // var / (var + eps), eps = 1e-5
  }
  CHECK_ERROR("LayerNorm(6): input [2,5] must end in 6", ln(ones({2, 5})));
  CHECK(LayerNorm(6, 1e-5, false).named_parameters().empty());
}

TEST_CASE("layers: gradcheck LayerNorm, affine or not") {
  manual_seed(6);
  LayerNorm ln(5);
  {
    // Non-trivial affine parameters so their gradients are exercised.
    NoGrad no_grad;
    assign(ln.weight, randn({5}));
    assign(ln.bias, randn({5}));
  }
  CHECK_GRADCHECK(gradcheck_module(ln, leaf64({3, 5})));
  LayerNorm plain(4, 1e-5, false);
  CHECK_GRADCHECK(gradcheck_module(plain, leaf64({2, 2, 4})));
}

TEST_CASE("layers: BatchNorm2d uses batch statistics in training and updates running ones") {
  manual_seed(7);
  BatchNorm2d bn(3);
  Tensor x = randn({4, 3, 2, 5}, DType::f32, 1.0, 3.0);
  Tensor y = bn(x);
  // Each channel of y has mean 0 and biased variance ~1.
  Tensor ym = mean(y, {0, 2, 3});
  Tensor yv = mean(y * y, {0, 2, 3});
  for (int c = 0; c < 3; ++c) {
    CHECK(std::abs(ym.at({c})) < 1e-5);
    CHECK(yv.at({c}) == doctest::Approx(1.0).epsilon(1e-3));
  }
  // running = 0.9 * initial + 0.1 * batch, the variance unbiased with n / (n - 1), n = 40.
  Tensor mu = mean(x, {0, 2, 3});
  Tensor var = mean((x - mu.view({1, 3, 1, 1})) * (x - mu.view({1, 3, 1, 1})), {0, 2, 3});
  for (int c = 0; c < 3; ++c) {
    CHECK(bn.running_mean.at({c}) == doctest::Approx(0.1 * mu.at({c})).epsilon(1e-5));
    CHECK(bn.running_var.at({c}) ==
          doctest::Approx(0.9 + 0.1 * var.at({c}) * 40.0 / 39.0).epsilon(1e-5));
  }
  CHECK_FALSE(bn.running_mean.requires_grad());
  CHECK(bn.running_mean.storage()->role() == MemRole::parameter);

  // Evaluation: (x - running_mean) / sqrt(running_var + eps), and no update.
  bn.eval();
  const Vec rm = bn.running_mean.to_vector(), rv = bn.running_var.to_vector();
  Tensor ye = bn(x);
  CHECK(bn.running_mean.to_vector() == rm);
  CHECK(bn.running_var.to_vector() == rv);
  const Vec xv = x.to_vector(), yev = ye.to_vector();
  for (size_t i = 0; i < xv.size(); ++i) {
    const size_t c = (i / 10) % 3;
    CHECK(yev[i] == doctest::Approx((xv[i] - rm[c]) / std::sqrt(rv[c] + 1e-5)).epsilon(1e-5));
  }
  CHECK_FALSE(all_close(ye, y));

  CHECK_ERROR("BatchNorm2d(3): input [4,2,2,5] must be [N, 3, H, W]", bn(ones({4, 2, 2, 5})));
  bn.train();
  CHECK_ERROR("more than one value per channel", bn(ones({1, 3, 1, 1})));
}

TEST_CASE("layers: gradcheck BatchNorm2d in training mode") {
  manual_seed(8);
  BatchNorm2d bn(2);
  {
    NoGrad no_grad;
    assign(bn.weight, randn({2}));
    assign(bn.bias, randn({2}));
  }
  CHECK_GRADCHECK(gradcheck_module(bn, leaf64({3, 2, 2, 2})));
  bn.eval();  // an affine map in evaluation
  CHECK_GRADCHECK(gradcheck_module(bn, leaf64({2, 2, 1, 3})));
}

// ---- Dropout
// -------------------------------------------------------------------------------------

TEST_CASE("layers: Dropout zeroes with probability p and rescales, only in training") {
  manual_seed(9);
  Dropout drop(0.25);
  Tensor x = ones({100, 100});
  const Vec y = drop(x).to_vector();
  int64_t zeros_seen = 0;
  for (double v : y) {
    CHECK((v == 0 || std::abs(v - 1 / 0.75) < 1e-6));
    zeros_seen += v == 0;
  }
  CHECK(zeros_seen > 2300);  // 2500 expected, sd ~43
  CHECK(zeros_seen < 2700);

  // The gradient is the same mask, scaled.
  Tensor xg = ones({50});
  xg.set_requires_grad();
  Tensor yg = drop(xg);
  sum(yg).backward();
  CHECK(xg.grad().to_vector() == yg.to_vector());

  drop.eval();
  CHECK(drop(x).impl_ptr() == x.impl_ptr());
  drop.train();
  CHECK(Dropout(0)(x).impl_ptr() == x.impl_ptr());
  CHECK(Dropout(1)(x).to_vector() == Vec(10000, 0.0));
  CHECK_ERROR("Dropout: p must be in [0, 1]", Dropout(1.5));

  manual_seed(10);
  const Vec a = Dropout(0.5)(x).to_vector();
  manual_seed(10);
  CHECK(Dropout(0.5)(x).to_vector() == a);  // reproducible from the seed
}

// ---- Embedding
// -----------------------------------------------------------------------------------

TEST_CASE("layers: Embedding looks up rows") {
  manual_seed(11);
  Embedding emb(10, 4);
  Tensor ids = from_vector(std::vector<int64_t>{3, 0, 3, 9, 1, 2}, {2, 3});
  Tensor y = emb(ids);
  CHECK(y.shape() == Dims{2, 3, 4});
  const Vec w = emb.weight.to_vector(), yv = y.to_vector();
  const int64_t want[] = {3, 0, 3, 9, 1, 2};
  for (int i = 0; i < 6; ++i) {
    for (int c = 0; c < 4; ++c) CHECK(at(yv, i * 4 + c) == at(w, want[i] * 4 + c));
  }
  CHECK(emb(scalar(5, DType::i64)).shape() == Dims{4});
  CHECK_ERROR("Embedding: id 10 is out of range [0, 10)",
              emb(from_vector(std::vector<int64_t>{1, 10}, {2})));
  CHECK_ERROR("Embedding: id -1 is out of range", emb(from_vector(std::vector<int64_t>{-1}, {1})));
  CHECK_ERROR("Embedding: ids must be int64, got float32", emb(ones({2})));
}

TEST_CASE("layers: gradcheck Embedding, with repeated ids") {
  manual_seed(12);
  Embedding emb(5, 3);
  Tensor ids = from_vector(std::vector<int64_t>{4, 1, 4, 0}, {2, 2});
  CHECK_GRADCHECK(gradcheck_module(emb, ids));
  // A row used twice gets both gradients; an unused row gets none.
  emb.to(DType::f32);
  sum(emb(ids)).backward();
  const Vec g = emb.weight.grad().to_vector();
  CHECK(at(g, 4 * 3) == 2.0);
  CHECK(at(g, 1 * 3) == 1.0);
  CHECK(at(g, 2 * 3) == 0.0);
}

// ---- attention and transformer
// -------------------------------------------------------------------

TEST_CASE("layers: MultiHeadAttention matches the definition, causal or not") {
  for (bool causal : {false, true}) {
    INFO("causal " << causal);
    manual_seed(13);
    MultiHeadAttention mha(8, 2, causal);
    mha.to(DType::f64);
    Tensor x = randn({2, 5, 8}, DType::f64);
    Tensor y = mha(x);
    CHECK(y.shape() == Dims{2, 5, 8});
    for (int64_t b = 0; b < 2; ++b) {
      const Vec ref = attention_ref(mha, x.select(0, b).to_vector(), 5, 8, 2, causal);
      CHECK(all_close(y.select(0, b), from_vector(ref, {5, 8}), 1e-10));
    }
    // Unbatched [T, D] input is one sequence.
    CHECK(all_close(mha(x.select(0, 1)), y.select(0, 1), 1e-12));
  }
}

TEST_CASE("layers: causal attention ignores future tokens") {
  manual_seed(14);
  for (bool causal : {true, false}) {
    MultiHeadAttention mha(8, 4, causal);
    Tensor x = randn({1, 6, 8});
    Vec changed = x.to_vector();
    for (int c = 0; c < 8; ++c) changed[static_cast<size_t>(5 * 8 + c)] += 1.0;  // last token
    const Vec a = mha(x).to_vector();
    const Vec b = mha(cast(from_vector(changed, {1, 6, 8}), DType::f32)).to_vector();
    bool earlier_same = true;
    for (size_t i = 0; i < 5 * 8; ++i) earlier_same &= std::abs(a[i] - b[i]) < 1e-6;
    CHECK(earlier_same == causal);
  }
  CHECK_ERROR("d_model (10) must be a positive multiple of heads (4)", MultiHeadAttention(10, 4));
  MultiHeadAttention mha(8, 2);
  CHECK_ERROR("input [2,3,7] must be [B, T, 8] or [T, 8]", mha(ones({2, 3, 7})));
}

TEST_CASE("layers: gradcheck MultiHeadAttention, causal and not") {
  for (bool causal : {false, true}) {
    INFO("causal " << causal);
    manual_seed(15);
    MultiHeadAttention mha(4, 2, causal);
    CHECK_GRADCHECK(gradcheck_module(mha, leaf64({2, 3, 4})));
  }
}

TEST_CASE("layers: TransformerBlock is pre-LN with residuals") {
  manual_seed(16);
  TransformerBlock block(8, 2);
  Tensor x = randn({2, 4, 8});
  Tensor h = x + (*block.attn)((*block.ln1)(x));
  Tensor want = h + (*block.mlp)((*block.ln2)(h));
  CHECK(all_close(block(x), want, 1e-6));
  CHECK((*block.mlp)[1]->type_name() == "GELU");
  CHECK(std::dynamic_pointer_cast<Linear>((*block.mlp)[0])->out_features() == 32);
}

TEST_CASE("layers: gradcheck TransformerBlock") {
  manual_seed(17);
  TransformerBlock block(4, 2, true, 2);
  {
    NoGrad no_grad;
    for (auto* ln : {block.ln1.get(), block.ln2.get()}) {
      assign(ln->weight, randn({4}));
      assign(ln->bias, randn({4}));
    }
  }
  CHECK_GRADCHECK(gradcheck_module(block, leaf64({2, 3, 4})));
}

// ---- pooling without pooling ops
// -----------------------------------------------------------------

TEST_CASE("layers: AdaptiveAvgPool2d averages evenly dividing blocks") {
  Tensor x = arange(0, 32, 1).reshape({1, 2, 4, 4});
  Tensor g = AdaptiveAvgPool2d()(x);
  CHECK(g.shape() == Dims{1, 2, 1, 1});
  CHECK(g.to_vector() == Vec{7.5, 23.5});
  Tensor p = AdaptiveAvgPool2d(2)(x);
  CHECK(p.shape() == Dims{1, 2, 2, 2});
  // Channel 0, top-left block: mean of 0, 1, 4, 5.
  CHECK(p.to_vector() == Vec{2.5, 4.5, 10.5, 12.5, 18.5, 20.5, 26.5, 28.5});
  CHECK(AdaptiveAvgPool2d(4, 1)(x).shape() == Dims{1, 2, 4, 1});
  CHECK_ERROR("not divisible", AdaptiveAvgPool2d(3)(x));
  CHECK_ERROR("must be [N, C, H, W]", AdaptiveAvgPool2d()(ones({2, 4})));
  AdaptiveAvgPool2d pool(2);
  CHECK_GRADCHECK(gradcheck_module(pool, leaf64({2, 2, 4, 2})));
}

// ---- convolution and pooling layers
// --------------------------------------------------------------

namespace {

// y[n][o][i][j] = b[o] + sum_{c,u,v} w[o][c][u][v] x[n][c][i*s+u-p][j*s+v-p] (zero padding).
Vec conv_ref(const Tensor& xt, const Tensor& wt, const Tensor& bt, int s, int p) {
  const Vec x = xt.to_vector(), w = wt.to_vector();
  const Vec b = bt.defined() ? bt.to_vector() : Vec{};
  const int64_t n = xt.size(0), c = xt.size(1), h = xt.size(2), wd = xt.size(3);
  const int64_t o = wt.size(0), k = wt.size(2);
  const int64_t ho = (h + 2 * p - k) / s + 1, wo = (wd + 2 * p - k) / s + 1;
  Vec y(static_cast<size_t>(n * o * ho * wo));
  for (int64_t in = 0; in < n; ++in)
    for (int64_t io = 0; io < o; ++io)
      for (int64_t i = 0; i < ho; ++i)
        for (int64_t j = 0; j < wo; ++j) {
          double acc = b.empty() ? 0 : at(b, io);
          for (int64_t ic = 0; ic < c; ++ic)
            for (int64_t u = 0; u < k; ++u)
              for (int64_t v = 0; v < k; ++v) {
                const int64_t r = i * s + u - p, q = j * s + v - p;
                if (r < 0 || r >= h || q < 0 || q >= wd) continue;
                acc += at(w, ((io * c + ic) * k + u) * k + v) *
                       at(x, ((in * c + ic) * h + r) * wd + q);
              }
          y[static_cast<size_t>(((in * o + io) * ho + i) * wo + j)] = acc;
        }
  return y;
}

}  // namespace

TEST_CASE("layers: Conv2d matches the definition, with stride and padding") {
  manual_seed(41);
  for (auto [s, p] : {std::pair{1, 0}, std::pair{2, 1}, std::pair{1, 2}}) {
    INFO("stride " << s << " padding " << p);
    Conv2d conv(3, 4, 3, s, p);
    CHECK(conv.weight.shape() == Dims{4, 3, 3, 3});
    Tensor x = randn({2, 3, 7, 6});
    Tensor y = conv(x);
    const int64_t ho = (7 + 2 * p - 3) / s + 1, wo = (6 + 2 * p - 3) / s + 1;
    CHECK(y.shape() == Dims{2, 4, ho, wo});
    CHECK(all_close(y, from_vector(conv_ref(x, conv.weight, conv.bias, s, p), y.shape()), 1e-4));
  }
  Conv2d nob(2, 2, 1, 1, 0, false);
  CHECK_FALSE(nob.bias.defined());
  Tensor x = randn({1, 2, 3, 3});
  CHECK(
      all_close(nob(x), from_vector(conv_ref(x, nob.weight, Tensor(), 1, 0), {1, 2, 3, 3}), 1e-5));
  CHECK_ERROR("must be [N, 3, H, W]", Conv2d(3, 4, 3)(ones({1, 2, 5, 5})));
  CHECK_ERROR("Conv2d: invalid configuration", Conv2d(3, 4, 0));
  // Init: Kaiming uniform with fan_in = C * k * k = 27, bound 1/sqrt(27).
  Conv2d big(3, 64, 3);
  for (double w : big.weight.to_vector()) CHECK(std::abs(w) <= 1 / std::sqrt(27.0));
}

TEST_CASE("layers: a LeNet-style stack has the expected shapes and parameter counts") {
  manual_seed(42);
  Sequential net{std::make_shared<Conv2d>(1, 16, 3), std::make_shared<ReLU>(),
                 std::make_shared<MaxPool2d>(2),     std::make_shared<Conv2d>(16, 32, 3),
                 std::make_shared<ReLU>(),           std::make_shared<MaxPool2d>(2),
                 std::make_shared<Flatten>(),        std::make_shared<Linear>(800, 10)};
  CHECK(net[0]->parameter_count() == 160);
  CHECK(net[3]->parameter_count() == 4'640);
  CHECK(net[7]->parameter_count() == 8'010);
  CHECK(net.parameter_count() == 160 + 4'640 + 8'010);
  // 28 -> conv 26 -> pool 13 -> conv 11 -> pool 5: 32 * 5 * 5 = 800 features.
  Tensor y = net(randn({2, 1, 28, 28}));
  CHECK(y.shape() == Dims{2, 10});
  const std::string tree = net.tree();
  CHECK(tree.find("0: Conv2d(1 -> 16, kernel=3, stride=1, padding=0, bias=true)") !=
        std::string::npos);
  CHECK(tree.find("2: MaxPool2d(kernel=2, stride=2, padding=0)") != std::string::npos);
}

TEST_CASE("layers: MaxPool2d and AvgPool2d wrap the pooling ops") {
  Tensor x = arange(0, 32, 1).reshape({1, 2, 4, 4});
  CHECK(MaxPool2d(2)(x).to_vector() == Vec{5, 7, 13, 15, 21, 23, 29, 31});
  CHECK(AvgPool2d(2)(x).to_vector() == Vec{2.5, 4.5, 10.5, 12.5, 18.5, 20.5, 26.5, 28.5});
  CHECK(MaxPool2d(3, 1)(x).shape() == Dims{1, 2, 2, 2});
  CHECK(AvgPool2d(3, 2, 1)(x).shape() == Dims{1, 2, 2, 2});
  CHECK(MaxPool2d(2)(x).to_vector() == max_pool2d(x, 2).to_vector());
  CHECK_ERROR("MaxPool2d: invalid kernel=2, stride=1, padding=2", MaxPool2d(2, 1, 2));
  CHECK_ERROR("AvgPool2d: invalid kernel=0", AvgPool2d(0));
}

TEST_CASE("layers: gradcheck Conv2d, MaxPool2d and AvgPool2d") {
  manual_seed(43);
  Conv2d conv(2, 3, 3, 2, 1);
  CHECK_GRADCHECK(gradcheck_module(conv, leaf64({2, 2, 5, 4})));
  Conv2d nob(2, 2, 2, 1, 0, false);
  CHECK_GRADCHECK(gradcheck_module(nob, leaf64({1, 2, 3, 3})));
  // Max pooling: pairwise distinct values so no window has a tie within +-eps.
  std::vector<double> v(2 * 2 * 4 * 4);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>((i * 37) % v.size()) * 0.1;
  Tensor distinct = from_vector(v, {2, 2, 4, 4});
  distinct.set_requires_grad();
  MaxPool2d mp(2);
  CHECK_GRADCHECK(gradcheck_module(mp, distinct));
  AvgPool2d ap(3, 2, 1);
  CHECK_GRADCHECK(gradcheck_module(ap, leaf64({1, 2, 5, 5})));
}
