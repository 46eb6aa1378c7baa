// Data sets (nn/data/): TensorDataset and the batch path, the generated spirals and shapes, and
// character-level text (vocabulary, windows, split, entropy).
#include <doctest/doctest.h>

#include <unistd.h>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <set>
#include <string>
#include <vector>

#include "nn/data/data.h"
#include "tensor/ops.h"
#include "tests/test_util.h"

using prism::testing::contains;
using prism::testing::error_of;

using prism::Dims;
using prism::DType;
using prism::Tensor;
using namespace prism::nn::data;

namespace {

// Example i: input [2,3] float64 (a transposed view of 6i..6i+5), target [] int64 = 10 i.
// Only get(): batches go through Dataset's default fill_batch, which keeps get()'s dtypes.
class Plain : public Dataset {
 public:
  int64_t size() const override { return 4; }
  prism::nn::data::Example get(int64_t i) const override {
    check_index("Plain::get", i);
    std::vector<double> v(6);
    for (int k = 0; k < 6; ++k) v[static_cast<size_t>(k)] = 6.0 * static_cast<double>(i) + k;
    // Transposed, so the copy into the batch has to follow strides.
    Tensor x = prism::from_vector(v, {3, 2}).t();
    return {x, prism::scalar(static_cast<double>(10 * i), DType::i64)};
  }
};

}  // namespace

TEST_CASE("data: TensorDataset gets views and batches copies") {
  Tensor x = prism::arange(24).reshape({4, 2, 3});
  Tensor y = prism::from_vector(std::vector<int64_t>{3, 1, 4, 1}, {4});
  TensorDataset ds(x, y);
  CHECK(ds.size() == 4);
  CHECK(ds.spec().input_shape == Dims{2, 3});
  CHECK(ds.spec().target_shape == Dims{});
  CHECK(ds.spec().str() == "input [2,3] float32, target [] int64");

  Example e = ds.get(2);
  CHECK(e.input.shape() == Dims{2, 3});
  CHECK(e.input.shares_storage_with(x));
  CHECK(e.input.at({1, 2}) == 17);
  CHECK(e.target.item<int64_t>() == 4);

  Batch b = ds.get_batch({3, 0, 3});
  CHECK(b.input.shape() == Dims{3, 2, 3});
  CHECK(b.target.to_vector<int64_t>() == std::vector<int64_t>{1, 3, 1});
  CHECK(b.input.select(0, 0).to_vector<float>() == ds.get(3).input.to_vector<float>());
  CHECK(b.input.select(0, 1).to_vector<float>() == ds.get(0).input.to_vector<float>());
  CHECK(b.input.storage()->role() == prism::MemRole::data);
  CHECK_FALSE(b.input.shares_storage_with(x));

  CHECK(contains(error_of([&] { ds.get(4); }), "index 4 out of range for a data set of 4"));
  CHECK(contains(error_of([&] { ds.get_batch({0, -1}); }), "index -1 out of range"));
  CHECK(contains(error_of([&] { TensorDataset(x, prism::zeros({3}, DType::i64)); }),
                 "different numbers"));
  CHECK(contains(error_of([&] { TensorDataset(x, prism::scalar(1)); }), "first (example) dim"));
}

TEST_CASE("data: TensorDataset cuts its tensors from the graph") {
  Tensor x = prism::rand({5, 3});
  x.set_requires_grad();
  TensorDataset ds(x * 2.0, prism::zeros({5}, DType::i64));
  CHECK_FALSE(ds.inputs().requires_grad());
  CHECK_FALSE(ds.get_batch({1, 2}).input.requires_grad());
}

TEST_CASE("data: the default batch path stacks get() through strides") {
  Plain ds;
  CHECK(ds.spec().str() == "input [2,3] float64, target [] int64");
  Batch b = ds.get_batch({1, 3});
  CHECK(b.input.shape() == Dims{2, 2, 3});
  CHECK(b.input.dtype() == DType::f64);
  // get(1).input is [[6,8,10],[7,9,11]] (a transpose of 6..11 as [3,2]).
  CHECK(b.input.select(0, 0).to_vector<double>() == std::vector<double>{6, 8, 10, 7, 9, 11});
  CHECK(b.target.to_vector<int64_t>() == std::vector<int64_t>{10, 30});

  // copy_to_buffer converts dtypes too.
  std::vector<float> out(6);
  copy_to_buffer(ds.get(0).input, out.data(), DType::f32);
  CHECK(out == std::vector<float>{0, 2, 4, 1, 3, 5});
}

TEST_CASE("data: spirals match the demo's formula and are seeded") {
  TensorDataset s = spirals(50, 3, 0.0, 1);
  CHECK(s.inputs().shape() == Dims{150, 2});
  CHECK(s.targets().shape() == Dims{150});
  CHECK(s.targets().dtype() == DType::i64);
  // Without noise, point i of class k is at r = i/49, theta = 4k + 4r.
  const double r = 10.0 / 49, theta = 4.0 * 2 + 4.0 * r;
  CHECK(s.inputs().at({110, 0}) == doctest::Approx(r * std::sin(theta)));
  CHECK(s.inputs().at({110, 1}) == doctest::Approx(r * std::cos(theta)));
  CHECK(s.targets().at({110}) == 2);

  TensorDataset a = spirals(30, 4, 0.2, 7), b = spirals(30, 4, 0.2, 7), c = spirals(30, 4, 0.2, 8);
  CHECK(a.inputs().to_vector<float>() == b.inputs().to_vector<float>());
  CHECK(a.inputs().to_vector<float>() != c.inputs().to_vector<float>());
  // The global generator is untouched.
  prism::manual_seed(11);
  const double before = prism::rand({1}).item();
  prism::manual_seed(11);
  spirals(10, 2, 0.5, 3);
  CHECK(prism::rand({1}).item() == before);

  CHECK_THROWS_AS(spirals(1, 3), prism::Error);
  CHECK_THROWS_AS(spirals(5, 0), prism::Error);
}

TEST_CASE("data: shapes are seeded images of ten balanced classes") {
  TensorDataset s = shapes(200, 5);
  CHECK(s.inputs().shape() == Dims{200, 1, 28, 28});
  CHECK(s.inputs().dtype() == DType::f32);
  std::vector<int64_t> counts(10, 0);
  for (int64_t l : s.targets().to_vector<int64_t>()) ++counts[static_cast<size_t>(l)];
  for (int64_t c : counts) CHECK(c == 20);
  CHECK(shape_classes().size() == 10);

  std::vector<float> px = s.inputs().to_vector<float>();
  bool in_range = true;
  for (float v : px) in_range = in_range && v >= 0.0f && v <= 1.0f;
  CHECK(in_range);
  CHECK(shapes(200, 5).inputs().to_vector<float>() == px);
  CHECK(shapes(200, 6).inputs().to_vector<float>() != px);

  // Without noise, every image has a shape on it and a dark border row.
  TensorDataset clean = shapes(30, 1, 0.0, 20);
  CHECK(clean.inputs().shape() == Dims{30, 1, 20, 20});
  for (int64_t n = 0; n < 30; ++n) {
    Tensor img = clean.inputs().select(0, n).select(0, 0);
    CAPTURE(n);
    CHECK(prism::sum(img).item() > 3.0);
    CHECK(prism::sum(img.select(0, 0)).item() == 0.0);
  }
  // Different classes look different: the mean images of two classes are far apart.
  TensorDataset many = shapes(1000, 2, 0.0);
  Tensor mean_square = prism::zeros({28, 28}), mean_bar = prism::zeros({28, 28});
  for (int64_t n = 0; n < 1000; ++n) {
    if (n % 10 == 7) mean_bar = mean_bar + many.inputs().select(0, n).select(0, 0);
    if (n % 10 == 8) mean_square = mean_square + many.inputs().select(0, n).select(0, 0);
  }
  CHECK(prism::sum(prism::pow(mean_bar - mean_square, 2.0)).item() > 1.0);
  CHECK_THROWS_AS(shapes(10, 0, 0.1, 8), prism::Error);
}

TEST_CASE("data: vocabulary encodes and decodes, sorted by byte") {
  Vocabulary v("hello, world");
  CHECK(v.chars() == " ,dehlorw");
  CHECK(v.size() == 9);
  CHECK(v.id(' ') == 0);
  CHECK(v.id('w') == 8);
  CHECK(v.encode("low") == std::vector<int64_t>{5, 6, 8});
  CHECK(v.decode(v.encode("hello, world")) == "hello, world");
  CHECK(v.decode(prism::from_vector(std::vector<int64_t>{3, 4}, {2})) == "eh");
  CHECK(contains(error_of([&] { v.encode("hex"); }), "character 'x' is not in the vocabulary"));
  CHECK(contains(error_of([&] { v.decode(std::vector<int64_t>{9}); }), "id 9 out of range"));
  CHECK(contains(error_of([&] { v.decode(prism::zeros({2})); }), "must be int64"));
}

TEST_CASE("data: character windows, split and entropy") {
  const std::string text = "abcabcabcd";
  CharDataset ds(text, 4);
  CHECK(ds.vocab_size() == 4);
  CHECK(ds.size() == 6);
  Example e = ds.get(1);
  CHECK(e.input.shape() == Dims{4});
  CHECK(e.input.dtype() == DType::i64);
  CHECK(ds.decode(e.input) == "bcab");
  CHECK(ds.decode(e.target) == "cabc");
  Batch b = ds.get_batch({0, 5});
  CHECK(b.input.shape() == Dims{2, 4});
  CHECK(ds.decode(b.input) == "abcacabc");
  CHECK(ds.decode(b.target) == "bcababcd");

  // Entropy: p(a) = p(b) = p(c) = 0.3, p(d) = 0.1.
  const double h = -(3 * 0.3 * std::log(0.3) + 0.1 * std::log(0.1));
  CHECK(ds.unigram_entropy_nats() == doctest::Approx(h));
  CHECK(ds.unigram_entropy_bits() == doctest::Approx(h / std::numbers::ln2));
  CHECK(unigram_entropy_nats(text) == doctest::Approx(h));
  CHECK(unigram_entropy_nats("aaaa") == 0.0);

  CHECK(contains(error_of([&] { CharDataset("abcd", 4); }), "too short for block_size 4"));
  CHECK_THROWS_AS(CharDataset("abcd", 0), prism::Error);
}

TEST_CASE("data: the default text, split into training and validation") {
  std::string_view t = default_text();
  CHECK(t.size() > 3000);
  CharDataset all(t, 32);
  CHECK(all.vocab_size() > 30);
  CHECK(all.vocab_size() < 80);
  CHECK(all.decode(all.encode(std::string(t))) == t);
  // English prose: between 3.5 and 5 bits per character for single letters.
  CHECK(all.unigram_entropy_bits() > 3.5);
  CHECK(all.unigram_entropy_bits() < 5.0);
  CHECK(all.unigram_entropy_nats() < std::log(static_cast<double>(all.vocab_size())));

  auto [train, val] = all.split(0.9);
  CHECK(train.tokens().size() + val.tokens().size() == all.tokens().size());
  CHECK(train.tokens().size() ==
        static_cast<size_t>(std::floor(0.9 * static_cast<double>(t.size()))));
  CHECK(&train.vocab() == &all.vocab());
  CHECK(&val.vocab() == &all.vocab());
  CHECK(train.decode(train.tokens()) + val.decode(val.tokens()) == t);
  CHECK(contains(error_of([&] { all.split(0.999); }), "validation part"));
  CHECK_THROWS_AS(all.split(1.0), prism::Error);

  // Random windows: seeded, [B, T], y = x shifted.
  prism::Generator g1(4), g2(4);
  Batch a = train.random_batch(6, g1), b = train.random_batch(6, g2);
  CHECK(a.input.shape() == Dims{6, 32});
  CHECK(a.input.to_vector<int64_t>() == b.input.to_vector<int64_t>());
  std::vector<int64_t> x = a.input.to_vector<int64_t>(), y = a.target.to_vector<int64_t>();
  for (int r = 0; r < 6; ++r) {
    for (int c = 0; c + 1 < 32; ++c)
      CHECK(y[static_cast<size_t>(r * 32 + c)] == x[static_cast<size_t>(r * 32 + c + 1)]);
  }
}

TEST_CASE("data: CharDataset from a file") {
  namespace fs = std::filesystem;
  const fs::path p =
      fs::temp_directory_path() / ("prism_char_test_" + std::to_string(::getpid()) + ".txt");
  {
    std::ofstream out(p, std::ios::binary);
    out << "to be or not to be\n";
  }
  CharDataset ds = CharDataset::from_file(p.string(), 8);
  CHECK(ds.size() == 19 - 8);
  CHECK(ds.vocab().chars() == "\n benort");
  fs::remove(p);
  const std::string msg = error_of([&] { CharDataset::from_file(p.string(), 8); });
  CHECK(msg.rfind(p.string(), 0) == 0);
  CHECK(contains(msg, "no such file"));
}
