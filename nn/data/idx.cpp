#include "nn/data/idx.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>

namespace prism::nn::data {

namespace {

std::string hex(uint32_t v, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%0*X", digits, v);
  return buf;
}

const char* idx_type_name(uint8_t code) {
  switch (code) {
    case 0x08:
      return "unsigned byte";
    case 0x09:
      return "signed byte";
    case 0x0B:
      return "int16";
    case 0x0C:
      return "int32";
    case 0x0D:
      return "float32";
    case 0x0E:
      return "float64";
  }
  return "unknown type";
}

// A file read through zlib: gzip-compressed or not, the same calls. Every error names the file.
class GzFile {
 public:
  explicit GzFile(const std::string& path) : path_(path) {
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (!std::filesystem::exists(status)) fail("no such file");
    if (std::filesystem::is_directory(status)) fail("is a directory, not an IDX file");
    errno = 0;
    file_ = gzopen(path.c_str(), "rb");
    if (!file_)
      fail(std::string("cannot open: ") + (errno ? std::strerror(errno) : "out of memory"));
    gzbuffer(file_, 1 << 18);  // 256 KiB reads: fewer system calls on a 26 MB file
  }
  ~GzFile() {
    if (file_) gzclose(file_);
  }
  GzFile(const GzFile&) = delete;
  GzFile& operator=(const GzFile&) = delete;

  // Reads up to n bytes; returns fewer only at the end of the data. A corrupt or cut-off gzip
  // stream is an Error, never a short read.
  size_t read(void* dst, size_t n) {
    size_t got = 0;
    while (got < n) {
      const auto chunk = static_cast<unsigned>(std::min<size_t>(n - got, size_t{1} << 30));
      const int r = gzread(file_, static_cast<char*>(dst) + got, chunk);
      if (r > 0) got += static_cast<size_t>(r);
      if (r <= 0 || static_cast<unsigned>(r) < chunk) {
        check_stream();
        if (r <= 0) break;
      }
    }
    return got;
  }

  bool compressed() const { return gzdirect(file_) == 0; }
  // The file's size on disk (compressed, for a .gz file).
  int64_t disk_bytes() const {
    std::error_code ec;
    const auto n = std::filesystem::file_size(path_, ec);
    if (ec) fail("cannot read its size: " + ec.message());
    return static_cast<int64_t>(n);
  }
  [[noreturn]] void fail(const std::string& what) const { throw Error(path_ + ": " + what); }
  const std::string& path() const { return path_; }

 private:
  void check_stream() {
    int errnum = Z_OK;
    std::string msg = gzerror(file_, &errnum);
    if (errnum == Z_OK || errnum == Z_STREAM_END) return;
    // zlib puts the path in front of its message; ours is already there.
    if (msg.rfind(path_ + ": ", 0) == 0) msg.erase(0, path_.size() + 2);
    if (errnum == Z_ERRNO) fail(std::string("read error: ") + std::strerror(errno));
    if (errnum == Z_BUF_ERROR) fail(std::string("truncated gzip stream (zlib: ") + msg + ")");
    fail(std::string("corrupt gzip data (zlib: ") + msg + ")");
  }

  std::string path_;
  gzFile file_ = nullptr;
};

uint32_t big_endian_u32(const unsigned char* b) {
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | uint32_t{b[3]};
}

// Reads and checks the header of an unsigned-byte IDX file with `want_ndim` dims; returns the
// dims and the number of data bytes they promise.
Dims read_header(GzFile& f, int want_ndim, const char* kind, int64_t& data_bytes) {
  unsigned char magic[4];
  const size_t got = f.read(magic, 4);
  if (got < 4) {
    f.fail("truncated: " + std::to_string(got) + " bytes, too short for an IDX header" +
           (got == 0 ? " (the file is empty)" : ""));
  }
  const uint32_t want_magic = 0x0800u | static_cast<uint32_t>(want_ndim);
  if (magic[0] != 0 || magic[1] != 0) {
    f.fail("bad magic number " + hex(big_endian_u32(magic), 8) + ": not an IDX file (an IDX " +
           kind + " file starts with " + hex(want_magic, 8) + ")");
  }
  if (magic[2] != 0x08) {
    f.fail("wrong IDX type code " + hex(magic[2], 2) + " (" + idx_type_name(magic[2]) +
           "): MNIST-style " + kind + " are " + hex(0x08, 2) + " (unsigned byte), magic " +
           hex(want_magic, 8));
  }
  if (magic[3] != want_ndim) {
    f.fail("magic " + hex(big_endian_u32(magic), 8) + " says " + std::to_string(magic[3]) +
           (magic[3] == 1 ? " dim" : " dims") + ", but an IDX " + kind + " file has " +
           std::to_string(want_ndim) + " (magic " + hex(want_magic, 8) + ")" +
           (magic[3] == 1   ? ": is this a label file?"
            : magic[3] == 3 ? ": is this an image file?"
                            : ""));
  }
  unsigned char raw[4 * 3];
  const size_t want = 4 * static_cast<size_t>(want_ndim);
  const size_t got_dims = f.read(raw, want);
  if (got_dims < want) {
    f.fail("truncated: the header ends after " + std::to_string(4 + got_dims) +
           " bytes, expected " + std::to_string(4 + want));
  }
  Dims dims;
  for (int d = 0; d < want_ndim; ++d) dims.push_back(big_endian_u32(raw + 4 * d));
  // Three uint32 dims can claim 2^96 bytes: checked arithmetic first, then the claim against
  // what the file can hold, all before anything is allocated.
  const std::string claim =
      std::string(kind == std::string("image") ? "images" : "labels") + " of dims " + dims.str();
  data_bytes = checked_shape_size(dims, DType::i64, f.path() + ": header").numel;
  const int64_t header_bytes = 4 + 4 * want_ndim;
  const int64_t disk = f.disk_bytes();
  if (!f.compressed() && data_bytes != disk - header_bytes) {
    f.fail("the header claims " + claim + ", " + std::to_string(data_bytes) +
           " data bytes, but the file has " + std::to_string(disk - header_bytes) +
           " bytes after its " + std::to_string(header_bytes) + "-byte header (" +
           std::to_string(disk) + " bytes in all): " +
           (data_bytes > disk - header_bytes ? "truncated, or the header is corrupt"
                                             : "extra bytes, or the header is corrupt"));
  }
  // Deflate cannot expand data more than 1032:1 (a 258-byte match in about 2 bits), so a gzip
  // file of n bytes holds at most 1032 n bytes: a tiny file cannot make us allocate gigabytes.
  constexpr int64_t kMaxDeflateRatio = 1032;
  if (f.compressed() && data_bytes > kMaxDeflateRatio * disk) {
    f.fail("the header claims " + claim + ", " + std::to_string(data_bytes) +
           " data bytes, but a gzip file of " + std::to_string(disk) +
           " bytes decompresses to at most " + std::to_string(kMaxDeflateRatio * disk) +
           ": truncated, or the header is corrupt");
  }
  return dims;
}

// After the data: anything left means the header and the file disagree.
void expect_end(GzFile& f, const Dims& dims, int64_t data_bytes) {
  char buf[1 << 16];
  size_t extra = 0;
  for (size_t r; (r = f.read(buf, sizeof buf)) > 0;) extra += r;
  if (extra > 0) {
    f.fail("size mismatch: the header's dims " + dims.str() + " promise " +
           std::to_string(data_bytes) + " data bytes, but the " +
           (f.compressed() ? "decompressed " : "") + "file has " + std::to_string(extra) + " more");
  }
}

void expect_data(GzFile& f, size_t got, const Dims& dims, int64_t data_bytes) {
  if (static_cast<int64_t>(got) < data_bytes) {
    f.fail("truncated: the header's dims " + dims.str() + " promise " + std::to_string(data_bytes) +
           " data bytes, but the " + (f.compressed() ? "decompressed " : "") + "file holds only " +
           std::to_string(got));
  }
}

// The data tensor for a checked header; out of memory names the file.
Tensor allocate_data(const GzFile& f, const Dims& dims, DType dtype) {
  try {
    return make_data_tensor(dims, dtype);
  } catch (const Error& e) {
    f.fail(std::string("cannot hold its data ") + dims.str() + " " + dtype_name(dtype) + ": " +
           e.what());
  }
}

}  // namespace

Tensor read_idx_images(const std::string& path, PixelNorm norm) {
  if (!(norm.std > 0.0f)) {
    throw Error(path + ": PixelNorm std must be positive, got " + std::to_string(norm.std));
  }
  GzFile f(path);
  int64_t bytes = 0;
  const Dims dims = read_header(f, 3, "image", bytes);
  Tensor out = allocate_data(f, dims, DType::f32);
  // One table lookup per pixel: lut[v] = (v / 255 - mean) / std, computed once per value.
  float lut[256];
  for (int v = 0; v < 256; ++v) lut[v] = (static_cast<float>(v) / 255.0f - norm.mean) / norm.std;
  float* dst = out.data<float>();
  std::vector<unsigned char> buf(size_t{1} << 20);
  int64_t done = 0;
  while (done < bytes) {
    const size_t want =
        static_cast<size_t>(std::min<int64_t>(bytes - done, static_cast<int64_t>(buf.size())));
    const size_t got = f.read(buf.data(), want);
    for (size_t i = 0; i < got; ++i) dst[done + static_cast<int64_t>(i)] = lut[buf[i]];
    done += static_cast<int64_t>(got);
    if (got < want) expect_data(f, static_cast<size_t>(done), dims, bytes);
  }
  expect_end(f, dims, bytes);
  return out;
}

Tensor read_idx_labels(const std::string& path) {
  GzFile f(path);
  int64_t bytes = 0;
  const Dims dims = read_header(f, 1, "label", bytes);
  std::vector<unsigned char> raw(static_cast<size_t>(bytes));
  expect_data(f, f.read(raw.data(), raw.size()), dims, bytes);
  expect_end(f, dims, bytes);
  Tensor out = allocate_data(f, dims, DType::i64);
  int64_t* dst = out.data<int64_t>();
  for (size_t i = 0; i < raw.size(); ++i) dst[i] = raw[i];
  return out;
}

TensorDataset read_idx_dataset(const std::string& images_path, const std::string& labels_path,
                               PixelNorm norm) {
  // The counts first, from the two headers alone: a mismatch is found before either file's
  // data is read (a small gzip file can claim, and hold, hundreds of megabytes of labels).
  auto count = [](const std::string& path, int ndim, const char* kind) {
    GzFile f(path);
    int64_t bytes = 0;
    return read_header(f, ndim, kind, bytes)[0];
  };
  const int64_t n_images = count(images_path, 3, "image"),
                n_labels = count(labels_path, 1, "label");
  if (n_images != n_labels) {
    throw Error(images_path + ": " + std::to_string(n_images) + " images, but " + labels_path +
                " has " + std::to_string(n_labels) + " labels; they must pair up one to one");
  }
  Tensor images = read_idx_images(images_path, norm);
  Tensor labels = read_idx_labels(labels_path);
  return TensorDataset(images.unsqueeze(1), labels);
}

std::string fashion_mnist_dir() {
  const char* env = std::getenv("PRISM_FASHION_MNIST");
  return (env && *env) ? std::string(env) : std::string(kFashionMnistDir);
}

std::string find_mnist_file(const std::string& dir, bool train, const std::string& kind) {
  if (kind != "images" && kind != "labels") {
    throw Error("find_mnist_file: kind must be \"images\" or \"labels\", got \"" + kind + "\"");
  }
  const std::string split = train ? "train" : "t10k";
  const std::string idx = kind == "images" ? "idx3-ubyte" : "idx1-ubyte";
  const std::string names[] = {split + "-" + kind + "-" + idx, split + "-" + kind + "." + idx};
  for (const std::string& name : names) {
    for (const char* suffix : {"", ".gz"}) {
      std::filesystem::path p = std::filesystem::path(dir) / (name + suffix);
      std::error_code ec;
      if (std::filesystem::is_regular_file(p, ec)) return p.string();
    }
  }
  return "";
}

bool fashion_mnist_available(const std::string& dir) {
  for (bool train : {true, false}) {
    for (const char* kind : {"images", "labels"}) {
      if (find_mnist_file(dir, train, kind).empty()) return false;
    }
  }
  return true;
}

TensorDataset fashion_mnist(const std::string& dir, bool train, PixelNorm norm) {
  const std::string split = train ? "train" : "t10k";
  std::string paths[2];
  const char* kinds[2] = {"images", "labels"};
  for (int i = 0; i < 2; ++i) {
    paths[i] = find_mnist_file(dir, train, kinds[i]);
    if (paths[i].empty()) {
      const std::string idx = i == 0 ? "idx3" : "idx1";
      throw Error(
          "fashion_mnist: no " + split + "-" + kinds[i] + "-" + idx + "-ubyte(.gz) in " + dir +
          (dir == kFashionMnistDir ? " (install the Debian package dataset-fashion-mnist, or pass "
                                     "the directory of your own MNIST-format files)"
                                   : ""));
    }
  }
  return read_idx_dataset(paths[0], paths[1], norm);
}

TensorDataset fashion_mnist(bool train, PixelNorm norm) {
  return fashion_mnist(fashion_mnist_dir(), train, norm);
}

const std::vector<std::string>& fashion_mnist_classes() {
  static const std::vector<std::string> names = {"T-shirt/top", "Trouser",   "Pullover", "Dress",
                                                 "Coat",        "Sandal",    "Shirt",    "Sneaker",
                                                 "Bag",         "Ankle boot"};
  return names;
}

}  // namespace prism::nn::data
