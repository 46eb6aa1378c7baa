// The IDX file format (MNIST, Fashion-MNIST, EMNIST, KMNIST) and the Fashion-MNIST data set.
//
// An IDX file is a 4-byte magic number, then one big-endian uint32 per dim, then the data,
// row-major. The magic's bytes are 0, 0, a type code (0x08 = unsigned byte, the only one
// MNIST-style sets use) and the number of dims: images are 0x00000803 ([N, rows, cols]),
// labels 0x00000801 ([N]). Files may be gzip-compressed (.gz); both kinds are read through
// zlib's gzread, which passes an uncompressed file through unchanged.
//
// Every problem (missing file, truncated file, bad magic, wrong type code, wrong number of
// dims, more bytes than the header says, corrupt gzip stream, images and labels that disagree
// on N) is a prism::Error whose message starts with the file's path.
//
//   auto train = fashion_mnist(true);   // from kFashionMnistDir: 60000 x [1,28,28], labels 0..9
//   auto test = fashion_mnist("/home/me/mnist", false);  // any directory of MNIST-format files
#pragma once

#include <string>
#include <vector>

#include "nn/data/dataset.h"

namespace prism::nn::data {

// Pixel scaling: every byte v becomes (v / 255 - mean) / std. The defaults keep [0, 1].
struct PixelNorm {
  float mean = 0.0f;
  float std = 1.0f;
};
// Per-pixel mean and standard deviation of the training images (after scaling to [0,1]).
constexpr PixelNorm kFashionMnistNorm{0.2860f, 0.3530f};
constexpr PixelNorm kMnistNorm{0.1307f, 0.3081f};

// An IDX image file as float32 [N, rows, cols] (MemRole::data).
Tensor read_idx_images(const std::string& path, PixelNorm norm = {});
// An IDX label file as int64 [N] (MemRole::data).
Tensor read_idx_labels(const std::string& path);
// Both, checked to agree on N; images as [N, 1, rows, cols] (one channel, ready for conv2d;
// an MLP flattens them with input.flatten(1)).
TensorDataset read_idx_dataset(const std::string& images_path, const std::string& labels_path,
                               PixelNorm norm = {});

// Where the Debian package dataset-fashion-mnist installs the files.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";
// The directory fashion_mnist(train) reads: $PRISM_FASHION_MNIST if set, else kFashionMnistDir.
std::string fashion_mnist_dir();

// The path of one of the four files in `dir`, trying `<name>`, `<name>.gz` and the dotted
// spelling some mirrors use (train-images.idx3-ubyte); "" if none exists. `kind` is
// "images" or "labels".
std::string find_mnist_file(const std::string& dir, bool train, const std::string& kind);
// True when `dir` holds all four files (train and t10k images and labels), raw or gzipped.
bool fashion_mnist_available(const std::string& dir = fashion_mnist_dir());

// The training (60000) or test (10000) split from `dir`: images [N,1,28,28] float32 scaled to
// [0,1] then normalised by `norm`, labels [N] int64 in 0..9. Works for MNIST files too.
TensorDataset fashion_mnist(const std::string& dir, bool train, PixelNorm norm = {});
TensorDataset fashion_mnist(bool train, PixelNorm norm = {});

// "T-shirt/top", "Trouser", ..., "Ankle boot": the names of labels 0..9.
const std::vector<std::string>& fashion_mnist_classes();

}  // namespace prism::nn::data
