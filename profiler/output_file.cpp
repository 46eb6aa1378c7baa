#include "profiler/output_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>

namespace prism::profiler {

namespace fs = std::filesystem;

namespace {
fs::path directory_of(const fs::path& p) {
  return p.has_parent_path() ? p.parent_path() : fs::path(".");
}
}  // namespace

// Symlinks are followed hop by hop, as the kernel does, so that a dangling link names the file
// it points to (which is then created, and the link stays valid); a loop is more than 40 hops,
// the kernel's own limit.
std::optional<fs::path> resolve_output_path(const std::string& path) {
  fs::path p = path;
  for (int hop = 0; hop < 40; ++hop) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(p, ec))) return p;
    const fs::path target = fs::read_symlink(p, ec);
    if (ec) return p;
    p = target.is_absolute() ? target : directory_of(p) / target;
  }
  return std::nullopt;
}

namespace {

// "<name>.tmp-": the start of every temporary of `target`, with <name> cut so that the whole
// temporary name, "<name>.tmp-<pid>-XXXXXX", stays within NAME_MAX (255 bytes) even for a target
// whose own name is legal but long.
std::string temp_stem(const fs::path& target) {
  constexpr size_t kSuffix = 5 + 10 + 1 + 6;  // ".tmp-", a pid (at most 10 digits), "-", XXXXXX
  std::string name = target.filename().string();
  if (name.size() > 255 - kSuffix) name.resize(255 - kSuffix);
  return name + ".tmp-";
}

// Removes "<stem><pid>-XXXXXX" files beside `target` whose process is gone (kill(pid, 0) fails
// with ESRCH): what a killed run left. A live pid's file may be another run's write in progress,
// so it stays; a name of any other form (a user's "x.json.tmp-1-notes.txt") is not ours.
void remove_stale_temporaries(const fs::path& target) {
  const std::string stem = temp_stem(target);
  std::error_code ec;
  for (fs::directory_iterator it(directory_of(target), ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(stem, 0) != 0) continue;
    const size_t dash = name.find('-', stem.size());
    if (dash == std::string::npos || dash == stem.size() || name.size() != dash + 7) continue;
    const std::string digits = name.substr(stem.size(), dash - stem.size());
    const std::string random = name.substr(dash + 1);
    auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
    if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9 ||
        !std::all_of(random.begin(), random.end(), alnum)) {
      continue;
    }
    const pid_t pid = static_cast<pid_t>(std::stol(digits));
    if (pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH) {
      std::error_code rm;
      fs::remove(it->path(), rm);
    }
  }
}

const char* kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

bool is_stream(mode_t m) {
  return S_ISCHR(m) || S_ISFIFO(m);
}

// Creates "<prefix>XXXXXX" in the target's directory; returns the fd (or -1, errno set).
int make_temporary(const fs::path& target, std::string& tmp_path) {
  tmp_path = (directory_of(target) / (temp_stem(target) + std::to_string(::getpid()) + "-XXXXXX"))
                 .string();
  return ::mkstemp(tmp_path.data());
}

[[noreturn]] void fail_write(const std::string& path, int err) {
  throw std::runtime_error("cannot write " + path + ": " + std::strerror(err));
}

}  // namespace

bool is_stream_name(const std::string& path) {
  return path.rfind("/dev/", 0) == 0 || path.rfind("/proc/self/fd/", 0) == 0;
}

void check_output_path(const std::string& path, const std::string& what, OutputKind kind) {
  auto fail = [&](const std::string& why) {
    throw std::runtime_error("cannot write the " + what + " to " + path + ": " + why);
  };
  if (path.empty()) fail("empty file name");
  if (kind == OutputKind::file_or_stream && is_stream_name(path)) {
    if (::access(path.c_str(), W_OK) != 0) fail(std::strerror(errno));
    return;  // written in place (write_output_file)
  }
  const std::optional<fs::path> resolved = resolve_output_path(path);
  if (!resolved) fail("too many levels of symbolic links");
  const fs::path target = *resolved;
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) fail("it is a directory");
    if (!S_ISREG(st.st_mode)) {
      if (kind == OutputKind::file || !is_stream(st.st_mode)) {
        fail(std::string("it is ") + kind_of(st.st_mode) + "; the " + what +
             " is written only to a regular file (atomically: a temporary file renamed over it)");
      }
      if (::access(target.c_str(), W_OK) != 0) fail(std::strerror(errno));
      return;  // a stream is written in place
    }
    if (::access(target.c_str(), W_OK) != 0) fail(std::strerror(errno));
  }
  const fs::path dir = directory_of(target);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) fail("directory " + dir.string() + " does not exist");
  remove_stale_temporaries(target);
  // The real test: create (and remove) a temporary where the write will create one.
  std::string probe;
  const int fd = make_temporary(target, probe);
  if (fd < 0) fail("cannot create a file in " + dir.string() + ": " + std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
}

void write_output_file(const std::string& path, const std::function<bool(std::FILE*)>& write,
                       OutputKind kind) {
  if (kind == OutputKind::file_or_stream && is_stream_name(path)) {
    // Appended, not truncated: stdout redirected to a log keeps what the run printed before.
    // What this process printed so far goes first (/dev/stdout is the same stream, buffered).
    std::fflush(stdout);
    std::fflush(stderr);
    std::FILE* f = std::fopen(path.c_str(), "ab");
    if (!f) fail_write(path, errno);
    const bool ok = write(f) && std::fflush(f) == 0;
    const int err = errno;
    if (std::fclose(f) != 0 || !ok) fail_write(path, ok ? errno : err);
    return;
  }
  const std::optional<fs::path> resolved = resolve_output_path(path);
  if (!resolved) fail_write(path, ELOOP);
  const fs::path target = *resolved;
  struct stat st {};
  const bool exists = ::stat(target.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) {
    if (kind == OutputKind::file || !is_stream(st.st_mode)) {
      throw std::runtime_error("cannot write " + path + ": it is " + kind_of(st.st_mode) +
                               ", not a regular file");
    }
    // A device or a pipe (/dev/stdout, a FIFO) cannot be replaced: it is written as it is.
    std::FILE* f = std::fopen(target.c_str(), "wb");
    if (!f) fail_write(path, errno);
    const bool ok = write(f) && std::fflush(f) == 0;
    const int err = errno;
    if (std::fclose(f) != 0 || !ok) fail_write(path, ok ? errno : err);
    return;
  }
  remove_stale_temporaries(target);
  std::string tmp;
  const int fd = make_temporary(target, tmp);
  if (fd < 0) fail_write(path, errno);
  std::FILE* f = ::fdopen(fd, "wb");
  if (!f) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    fail_write(path, err);
  }
  bool ok = write(f) && std::fflush(f) == 0 && ::fsync(fd) == 0;
  int err = errno;
  if (std::fclose(f) != 0 && ok) ok = false, err = errno;
  // mkstemp makes the file 0600: keep the replaced file's permissions, or give a new file the
  // usual ones (0666 less the umask).
  mode_t mode = st.st_mode & 07777;
  if (!exists) {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  if (ok && ::chmod(tmp.c_str(), mode) != 0) ok = false, err = errno;
  if (ok && std::rename(tmp.c_str(), target.c_str()) != 0) ok = false, err = errno;
  if (!ok) {
    ::unlink(tmp.c_str());
    fail_write(path, err);
  }
  // The rename is durable once the directory is synced (best effort: some file systems refuse).
  const int dfd = ::open(directory_of(target).c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void write_text_file(const std::string& path, const std::string& text) {
  write_output_file(path, [&text](std::FILE* f) {
    return std::fwrite(text.data(), 1, text.size(), f) == text.size();
  });
}

}  // namespace prism::profiler
