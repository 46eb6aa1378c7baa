// IDX files (nn/data/idx.h): small files written here, raw and gzipped, read back value for
// value; every way a file can be broken gives a prism::Error naming the file; and the real
// Fashion-MNIST when the Debian package has installed it.
#include <doctest/doctest.h>
#include <zlib.h>

#include <unistd.h>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "nn/data/idx.h"
#include "tests/test_util.h"

using prism::testing::contains;

namespace fs = std::filesystem;
using prism::Tensor;
using namespace prism::nn::data;

namespace {

using Bytes = std::vector<unsigned char>;

// A fresh directory under the system temp dir, removed with everything in it at scope exit.
struct TempDir {
  fs::path path;
  TempDir() {
    static std::atomic<int> counter{0};
    path = fs::temp_directory_path() /
           ("prism_idx_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

void put_u32(Bytes& b, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<unsigned char>(v >> s));
}

Bytes idx(uint32_t magic, const std::vector<uint32_t>& dims, const Bytes& data) {
  Bytes b;
  put_u32(b, magic);
  for (uint32_t d : dims) put_u32(b, d);
  b.insert(b.end(), data.begin(), data.end());
  return b;
}

// n images of r x c whose pixel k (flat over the whole file) is k % 256.
Bytes image_file(uint32_t n, uint32_t r, uint32_t c) {
  Bytes data(static_cast<size_t>(n) * r * c);
  for (size_t k = 0; k < data.size(); ++k) data[k] = static_cast<unsigned char>(k % 256);
  return idx(0x00000803, {n, r, c}, data);
}

Bytes label_file(uint32_t n) {
  Bytes data(n);
  for (size_t k = 0; k < n; ++k) data[k] = static_cast<unsigned char>((k * 7) % 10);
  return idx(0x00000801, {n}, data);
}

std::string write_raw(const TempDir& dir, const std::string& name, const Bytes& b) {
  std::string path = dir.file(name);
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  return path;
}

std::string write_gz(const TempDir& dir, const std::string& name, const Bytes& b) {
  std::string path = dir.file(name);
  gzFile f = gzopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  if (!b.empty())
    REQUIRE(gzwrite(f, b.data(), static_cast<unsigned>(b.size())) == static_cast<int>(b.size()));
  gzclose(f);
  return path;
}

Bytes read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const prism::Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("not a prism::Error: ") + e.what();
  }
  return "(no error)";
}

// The message starts with the file's path and mentions `part`.
void check_error(const std::string& msg, const std::string& path, const std::string& part) {
  INFO(msg);
  CHECK(msg.rfind(path, 0) == 0);
  CHECK(contains(msg, part));
}

}  // namespace

TEST_CASE("idx: raw and gzipped image and label files read back value for value") {
  TempDir dir;
  const Bytes images = image_file(5, 3, 4);
  const Bytes labels = label_file(5);
  for (bool gz : {false, true}) {
    CAPTURE(gz);
    auto write = gz ? write_gz : write_raw;
    const std::string ip = write(dir, gz ? "img.gz" : "img", images);
    const std::string lp = write(dir, gz ? "lab.gz" : "lab", labels);

    Tensor x = read_idx_images(ip);
    CHECK(x.shape() == prism::Dims{5, 3, 4});
    CHECK(x.dtype() == prism::DType::f32);
    CHECK(x.storage()->role() == prism::MemRole::data);
    std::vector<float> v = x.to_vector<float>();
    for (size_t k = 0; k < v.size(); ++k) CHECK(v[k] == static_cast<float>(k % 256) / 255.0f);

    Tensor y = read_idx_labels(lp);
    CHECK(y.shape() == prism::Dims{5});
    CHECK(y.dtype() == prism::DType::i64);
    CHECK(y.to_vector<int64_t>() == std::vector<int64_t>{0, 7, 4, 1, 8});

    TensorDataset ds = read_idx_dataset(ip, lp);
    CHECK(ds.size() == 5);
    CHECK(ds.inputs().shape() == prism::Dims{5, 1, 3, 4});
    CHECK(ds.get(3).target.item<int64_t>() == 1);
    CHECK(ds.get(1).input.at({0, 0, 0}) == doctest::Approx(12.0 / 255));
  }
}

TEST_CASE("idx: normalisation applies (v / 255 - mean) / std") {
  TempDir dir;
  const std::string p = write_raw(dir, "img", image_file(1, 16, 16));
  Tensor x = read_idx_images(p, {0.5f, 0.25f});
  std::vector<float> v = x.to_vector<float>();
  for (size_t k = 0; k < v.size(); ++k) {
    CHECK(v[k] == doctest::Approx((static_cast<double>(k) / 255.0 - 0.5) / 0.25).epsilon(1e-6));
  }
  CHECK(contains(error_of([&] { read_idx_images(p, {0.0f, 0.0f}); }), "std must be positive"));
}

TEST_CASE("idx: an empty image file (N = 0) is a valid empty tensor") {
  TempDir dir;
  Tensor x = read_idx_images(write_raw(dir, "img", image_file(0, 28, 28)));
  CHECK(x.shape() == prism::Dims{0, 28, 28});
  CHECK(read_idx_labels(write_gz(dir, "lab.gz", label_file(0))).numel() == 0);
}

TEST_CASE("idx: a missing file or a directory is an Error naming it") {
  TempDir dir;
  const std::string missing = dir.file("nope-idx3-ubyte.gz");
  check_error(error_of([&] { read_idx_images(missing); }), missing, "no such file");
  check_error(error_of([&] { read_idx_labels(missing); }), missing, "no such file");
  check_error(error_of([&] { read_idx_images(dir.path.string()); }), dir.path.string(),
              "directory");
}

TEST_CASE("idx: truncated files, raw and gzipped") {
  TempDir dir;
  const Bytes good = image_file(4, 5, 5);
  for (bool gz : {false, true}) {
    CAPTURE(gz);
    auto write = gz ? write_gz : write_raw;
    const std::string sfx = gz ? ".gz" : "";
    // Empty file.
    std::string p = write(dir, "empty" + sfx, Bytes{});
    check_error(error_of([&] { read_idx_images(p); }), p, "truncated");
    // Cut inside the magic, inside the dims, and inside the data.
    for (size_t cut : {size_t{2}, size_t{9}, good.size() - 1, size_t{40}}) {
      CAPTURE(cut);
      p = write(dir, "cut" + std::to_string(cut) + sfx,
                Bytes(good.begin(), good.begin() + static_cast<long>(cut)));
      check_error(error_of([&] { read_idx_images(p); }), p, "truncated");
    }
    // The data part says how much is missing: a raw file from its size on disk, before reading;
    // a gzip file once its stream ends.
    p = write(dir, "short" + sfx, Bytes(good.begin(), good.end() - 10));
    check_error(error_of([&] { read_idx_images(p); }), p,
                gz ? "holds only 90" : "the file has 90 bytes after its 16-byte header");
  }
}

TEST_CASE("idx: more bytes than the header promises is a size mismatch") {
  TempDir dir;
  Bytes b = label_file(6);
  b.push_back(3);
  b.push_back(4);
  for (bool gz : {false, true}) {
    const std::string p = (gz ? write_gz : write_raw)(dir, gz ? "lab.gz" : "lab", b);
    check_error(error_of([&] { read_idx_labels(p); }), p,
                gz ? "2 more" : "6 data bytes, but the file has 8 bytes after its 8-byte header");
  }
}

TEST_CASE("idx: bad magic, wrong type code, images and labels swapped") {
  TempDir dir;
  std::string p = write_raw(dir, "zip", Bytes{'P', 'K', 3, 4, 0, 0, 0, 0});
  check_error(error_of([&] { read_idx_images(p); }), p, "bad magic number 0x504B0304");
  p = write_raw(dir, "float", idx(0x00000D03, {1, 1, 1}, {0, 0, 0, 0}));
  check_error(error_of([&] { read_idx_images(p); }), p, "wrong IDX type code 0x0D (float32)");
  p = write_raw(dir, "labels", label_file(3));
  check_error(error_of([&] { read_idx_images(p); }), p, "is this a label file?");
  p = write_raw(dir, "images", image_file(2, 2, 2));
  check_error(error_of([&] { read_idx_labels(p); }), p, "is this an image file?");
  // A header whose dims multiply out to an absurd size is refused before allocating.
  p = write_raw(dir, "huge", idx(0x00000803, {0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}, {}));
  check_error(error_of([&] { read_idx_images(p); }), p,
              "shape [4294967295,4294967295,4294967295] is too large");
}

// Issue 12, finding 3: an 8-byte label file claiming 2^32 - 1 labels made the reader allocate
// 4.4 GB and read for 19 s. Every claim is now checked against the file's size first.
TEST_CASE("idx: a header that claims more data than the file can hold is refused up front") {
  TempDir dir;
  std::string p = write_raw(dir, "claims", idx(0x00000801, {0xFFFFFFFF}, {}));
  check_error(error_of([&] { read_idx_labels(p); }), p,
              "the header claims labels of dims [4294967295], 4294967295 data bytes, but the file "
              "has 0 bytes after its 8-byte header (8 bytes in all): truncated");
  p = write_raw(dir, "images", idx(0x00000803, {60000, 28, 28}, Bytes(100, 7)));
  check_error(error_of([&] { read_idx_images(p); }), p,
              "the header claims images of dims [60000,28,28], 47040000 data bytes, but the file "
              "has 100 bytes after its 16-byte header");
  // Deflate expands at most 1032:1, so a small gzip file cannot hold a large claim.
  p = write_gz(dir, "claims.gz", idx(0x00000801, {1000000000}, Bytes(10, 1)));
  const std::string e = error_of([&] { read_idx_labels(p); });
  check_error(e, p,
              "the header claims labels of dims [1000000000], 1000000000 data bytes, but a "
              "gzip file of ");
  CHECK(contains(e, "decompresses to at most"));
}

TEST_CASE("idx: corrupt and cut-off gzip streams") {
  TempDir dir;
  const std::string good = write_gz(dir, "good.gz", image_file(20, 28, 28));
  Bytes z = read_all(good);
  REQUIRE(z.size() > 100);

  // Bytes overwritten in the middle of the deflate stream.
  Bytes bad = z;
  for (size_t i = 20; i < 60; ++i) bad[i] = 0xFF;
  std::string p = write_raw(dir, "corrupt.gz", bad);
  check_error(error_of([&] { read_idx_images(p); }), p, "gzip");

  // The compressed file cut in half.
  p = write_raw(dir, "cut.gz", Bytes(z.begin(), z.begin() + static_cast<long>(z.size() / 2)));
  check_error(error_of([&] { read_idx_images(p); }), p, "truncated gzip stream");

  // A flipped byte in the CRC at the end: the data decompress, then the check fails.
  bad = z;
  bad[bad.size() - 6] ^= 0x55;
  p = write_raw(dir, "crc.gz", bad);
  check_error(error_of([&] { read_idx_images(p); }), p, "corrupt gzip data");

  // A gzip header followed by garbage.
  p = write_raw(dir, "garbage.gz",
                Bytes{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xde, 0xad, 0xbe, 0xef, 1, 2, 3});
  CHECK(contains(error_of([&] { read_idx_images(p); }), p));
}

TEST_CASE("idx: images and labels that disagree on N") {
  TempDir dir;
  const std::string ip = write_raw(dir, "img", image_file(5, 2, 2));
  const std::string lp = write_raw(dir, "lab", label_file(4));
  const std::string msg = error_of([&] { read_idx_dataset(ip, lp); });
  check_error(msg, ip, "5 images");
  CHECK(contains(msg, lp + " has 4 labels"));
}

TEST_CASE("idx: fashion_mnist finds raw, gzipped and dotted file names in any directory") {
  TempDir dir;
  CHECK_FALSE(fashion_mnist_available(dir.path.string()));
  std::string msg = error_of([&] { fashion_mnist(dir.path.string(), true); });
  CHECK(contains(msg, "train-images-idx3-ubyte"));
  CHECK(contains(msg, dir.path.string()));

  write_gz(dir, "train-images-idx3-ubyte.gz", image_file(6, 28, 28));
  write_raw(dir, "train-labels-idx1-ubyte", label_file(6));
  write_raw(dir, "t10k-images.idx3-ubyte", image_file(2, 28, 28));
  CHECK_FALSE(fashion_mnist_available(dir.path.string()));
  write_gz(dir, "t10k-labels.idx1-ubyte.gz", label_file(2));
  CHECK(fashion_mnist_available(dir.path.string()));

  TensorDataset train = fashion_mnist(dir.path.string(), true);
  TensorDataset test = fashion_mnist(dir.path.string(), false, kFashionMnistNorm);
  CHECK(train.inputs().shape() == prism::Dims{6, 1, 28, 28});
  CHECK(test.inputs().shape() == prism::Dims{2, 1, 28, 28});
  CHECK(test.inputs().at({0, 0, 0, 0}) == doctest::Approx((0 - 0.2860) / 0.3530).epsilon(1e-5));
  CHECK(fashion_mnist_classes().size() == 10);

  // $PRISM_FASHION_MNIST overrides the default directory.
  const char* saved = std::getenv("PRISM_FASHION_MNIST");
  const std::string saved_value = saved ? saved : "";
  ::setenv("PRISM_FASHION_MNIST", dir.path.string().c_str(), 1);
  CHECK(fashion_mnist_dir() == dir.path.string());
  CHECK(fashion_mnist(true).size() == 6);
  if (saved) {
    ::setenv("PRISM_FASHION_MNIST", saved_value.c_str(), 1);
  } else {
    ::unsetenv("PRISM_FASHION_MNIST");
  }
  if (!saved) CHECK(fashion_mnist_dir() == kFashionMnistDir);
  CHECK(fashion_mnist_classes()[9] == "Ankle boot");
}

TEST_CASE("idx: the real Fashion-MNIST, when installed") {
  const std::string dir = fashion_mnist_dir();
  if (!fashion_mnist_available(dir)) {
    MESSAGE("skipped: no Fashion-MNIST in "
            << dir << " (apt-get install dataset-fashion-mnist, or set PRISM_FASHION_MNIST)");
    return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  TensorDataset train = fashion_mnist(dir, true);
  const auto t1 = std::chrono::steady_clock::now();
  TensorDataset test = fashion_mnist(dir, false);
  MESSAGE("Fashion-MNIST train split (60000 images) loaded in "
          << std::chrono::duration<double, std::milli>(t1 - t0).count() << " ms");

  CHECK(train.inputs().shape() == prism::Dims{60000, 1, 28, 28});
  CHECK(train.targets().shape() == prism::Dims{60000});
  CHECK(test.inputs().shape() == prism::Dims{10000, 1, 28, 28});
  CHECK(test.targets().shape() == prism::Dims{10000});
  for (const TensorDataset* ds : {&train, &test}) {
    std::vector<int64_t> counts(10, 0);
    bool in_range = true;
    for (int64_t l : ds->targets().to_vector<int64_t>()) {
      if (l < 0 || l > 9)
        in_range = false;
      else
        ++counts[static_cast<size_t>(l)];
    }
    CHECK(in_range);
    // Fashion-MNIST is balanced: 6000 / 1000 of each class.
    for (int64_t c : counts) CHECK(c == ds->size() / 10);
  }
  const float* px = train.inputs().data<float>();
  float lo = 1, hi = 0;
  double sum = 0;
  for (int64_t i = 0; i < train.inputs().numel(); ++i) {
    lo = std::min(lo, px[i]);
    hi = std::max(hi, px[i]);
    sum += px[i];
  }
  CHECK(lo == 0.0f);
  CHECK(hi == 1.0f);
  CHECK(sum / static_cast<double>(train.inputs().numel()) ==
        doctest::Approx(kFashionMnistNorm.mean).epsilon(0.01));
}
