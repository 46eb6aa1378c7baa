// Output files (profiler/output_file.h): checked before the work, written atomically, never left
// half-written, stale temporaries of killed runs cleaned, and every error carrying the OS reason.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "profiler/output_file.h"

using namespace prism::profiler;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "prism_output_file_XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path, ec);
  }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
  // Every name in the directory, sorted.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
};

std::string read(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// A pid that is certainly not running: a child that has exited and been reaped.
pid_t dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

}  // namespace

TEST_CASE("output file: written whole, replacing the old one, with no temporary left") {
  TempDir dir;
  const std::string p = dir / "out.json";
  write_text_file(p, "first\n");
  CHECK(read(p) == "first\n");
  write_text_file(p, "second, longer\n");
  CHECK(read(p) == "second, longer\n");
  CHECK(dir.names() == std::vector<std::string>{"out.json"});
  // A new file gets the usual permissions (0666 less the umask), not mkstemp's 0600.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  CHECK((fs::status(p).permissions() & fs::perms::all) == static_cast<fs::perms>(0666 & ~mask));
}

TEST_CASE("output file: a failed write leaves the old file and no temporary") {
  TempDir dir;
  const std::string p = dir / "out.json";
  write_text_file(p, "kept\n");
  const std::string e = error_of([&] {
    write_output_file(p, [](std::FILE*) {
      errno = ENOSPC;  // as a full disk reports it
      return false;
    });
  });
  CHECK(contains(e, "cannot write " + p + ": No space left on device"));
  CHECK(read(p) == "kept\n");
  CHECK(dir.names() == std::vector<std::string>{"out.json"});
}

TEST_CASE("output file: a symlink is followed and kept, a FIFO is refused for a regular file") {
  TempDir dir;
  const std::string real = dir / "real.json", link = dir / "link.json";
  write_text_file(real, "old\n");
  fs::create_symlink("real.json", link);
  write_text_file(link, "new\n");
  CHECK(fs::is_symlink(fs::symlink_status(link)));
  CHECK(read(real) == "new\n");

  // A dangling link: the file it names is created and the link stays; a loop is refused.
  fs::create_symlink("made.json", dir / "dangling.json");
  write_text_file(dir / "dangling.json", "via link\n");
  CHECK(fs::is_symlink(fs::symlink_status(dir / "dangling.json")));
  CHECK(read(dir / "made.json") == "via link\n");
  fs::create_symlink("loop_b", dir / "loop_a");
  fs::create_symlink("loop_a", dir / "loop_b");
  CHECK(contains(error_of([&] { check_output_path(dir / "loop_a", "json"); }),
                 "too many levels of symbolic links"));
  CHECK(contains(error_of([&] { write_text_file(dir / "loop_a", "x"); }),
                 "Too many levels of symbolic links"));
  CHECK(fs::is_symlink(fs::symlink_status(dir / "loop_a")));  // not replaced
  // A dangling link into a directory that does not exist fails the check.
  fs::create_symlink("nowhere/x.json", dir / "lost.json");
  CHECK(
      contains(error_of([&] { check_output_path(dir / "lost.json", "json"); }), "does not exist"));

  const std::string fifo = dir / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(contains(error_of([&] { check_output_path(fifo, "checkpoint", OutputKind::file); }),
                 "cannot write the checkpoint to " + fifo + ": it is a FIFO"));
  CHECK(contains(error_of([&] {
                   write_output_file(
                       fifo, [](std::FILE*) { return true; }, OutputKind::file);
                 }),
                 "it is a FIFO, not a regular file"));
  CHECK(fs::is_fifo(fifo));  // not replaced
  // A text output may go to a stream: the check accepts it (writing would block on a FIFO).
  check_output_path(fifo, "json", OutputKind::file_or_stream);
  check_output_path("/dev/null", "json", OutputKind::file_or_stream);
  write_text_file("/dev/null", "discarded\n");
}

TEST_CASE("output file: the check names what is wrong before any work") {
  TempDir dir;
  auto err = [](const std::string& p) { return error_of([&] { check_output_path(p, "trace"); }); };
  CHECK(contains(err(""), "empty file name"));
  CHECK(contains(err(dir.path.string()), "it is a directory"));
  CHECK(contains(err(dir / "no/such/dir/t.json"),
                 "directory " + (dir / "no/such/dir") + " does not exist"));
  { std::ofstream(dir / "file") << "x"; }
  CHECK(contains(err(dir / "file/t.json"), "does not exist"));
  // A directory no file can be created in: the probe finds it (unless we are root, whom
  // permissions do not stop: then /proc, where no one can create files, stands in).
  const std::string ro = dir / "ro";
  fs::create_directory(ro);
  fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
  const std::string where = ::geteuid() == 0 ? std::string("/proc/prism.json") : ro + "/t.json";
  const std::string e = err(where);
  CHECK(contains(e, "cannot create a file in"));
  CHECK(contains(e, ::geteuid() == 0 ? "/proc" : ro));
  check_output_path(dir / "fine.json", "trace");
  CHECK(!fs::exists(dir / "fine.json"));  // the check creates nothing that stays
  CHECK(dir.names() == std::vector<std::string>{"file", "ro"});
}

TEST_CASE("output file: temporaries of a killed run are removed, a live run's are kept") {
  TempDir dir;
  const std::string p = dir / "w.safetensors";
  const std::string stale = p + ".tmp-" + std::to_string(dead_pid()) + "-abc123";
  const std::string live = p + ".tmp-" + std::to_string(::getppid()) + "-def456";
  const std::string other = dir / "other.json.tmp-1-zzz";  // another target's: not ours
  // Names that only start like a temporary: a user's notes, a cut-off name.
  const std::string notes = p + ".tmp-" + std::to_string(dead_pid()) + "-my_notes.txt";
  const std::string cut = p + ".tmp-" + std::to_string(dead_pid()) + "-";
  for (const std::string& f : {stale, live, other, notes, cut}) std::ofstream(f) << "partial";
  check_output_path(p, "checkpoint", OutputKind::file);
  CHECK(!fs::exists(stale));
  CHECK(fs::exists(live));
  CHECK(fs::exists(other));
  CHECK(fs::exists(notes));
  CHECK(fs::exists(cut));
  std::ofstream(stale) << "partial";
  write_text_file(p, "x");
  CHECK(!fs::exists(stale));
  CHECK(read(p) == "x");
}

TEST_CASE("output file: a legal long name gets a temporary whose name is legal too") {
  TempDir dir;
  const std::string p = dir / std::string(250, 'n');  // NAME_MAX is 255
  check_output_path(p, "json");
  write_text_file(p, "long\n");
  CHECK(read(p) == "long\n");
  CHECK(dir.names().size() == 1);
}
