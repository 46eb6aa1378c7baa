// What the fuzz targets share. Each target is a function prism::fuzz::<target>_input(data, size)
// that returns whether the reader accepted the input and aborts on a finding; the file defines
// LLVMFuzzerTestOneInput around it unless PRISM_FUZZ_NO_MAIN is defined, so the regression test
// (tests/nn/fuzz_regressions_test.cpp) can include the same code and feed it files.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace prism::fuzz {

// A finding: print what was wrong and abort, which libFuzzer (and a test run) reports as a crash
// with the input that caused it.
[[noreturn]] inline void finding(const char* target, const char* what) {
  std::fprintf(stderr, "%s: finding: %s\n", target, what);
  std::abort();
}

// A scratch file for the targets whose readers take a path: one memfd per process (no file on
// disk, nothing to clean up after a crash), rewritten with each input. path() is
// /proc/self/fd/N, which every reader opens like a regular file.
class ScratchFile {
 public:
  explicit ScratchFile(const char* name) {
    fd_ = memfd_create(name, MFD_CLOEXEC);
    if (fd_ < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  // Replaces the file's contents with `size` bytes.
  void write(const void* data, size_t size) {
    if (ftruncate(fd_, 0) != 0) fail("ftruncate");
    const auto* p = static_cast<const char*>(data);
    size_t done = 0;
    while (done < size) {
      const ssize_t n = pwrite(fd_, p + done, size - done, static_cast<off_t>(done));
      if (n <= 0) fail("pwrite");
      done += static_cast<size_t>(n);
    }
  }

  const std::string& path() const { return path_; }

 private:
  [[noreturn]] static void fail(const char* what) {
    std::perror(what);
    std::abort();
  }

  int fd_ = -1;
  std::string path_;
};

}  // namespace prism::fuzz
