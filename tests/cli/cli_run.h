// Runs the built `prism` binary in a shell and captures what it did: exit code, stdout, stderr.
// Each run gets its own temporary directory as the working directory, so default output files
// (trace.json, profile.json) never land in the source or build tree.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

namespace prism::cli_test {

namespace fs = std::filesystem;

inline std::string prism_binary() {
  return std::string(PRISM_BINARY_DIR) + "/prism";
}

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fresh directory under the system temp dir, removed when the object goes.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "prism_cli_test_XXXXXX").string();
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    REQUIRE(::mkdtemp(buf.data()) != nullptr);
    path_ = buf.data();
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

struct RunResult {
  bool exited = false;  // false: killed by a signal (a crash)
  int code = -1;
  std::string out, err;
};

// Runs a shell command line in `dir` ({prism} stands for the quoted prism binary) and captures
// its exit code, stdout and stderr.
inline RunResult run_shell(std::string cmd_line, const fs::path& dir) {
  const std::string bin = "'" + prism_binary() + "'";
  for (size_t at = cmd_line.find("{prism}"); at != std::string::npos;
       at = cmd_line.find("{prism}", at + bin.size())) {
    cmd_line.replace(at, 7, bin);
  }
  const fs::path out = dir / ".stdout", err = dir / ".stderr";
  const std::string cmd = "cd '" + dir.string() + "' && " + cmd_line + " > '" + out.string() +
                          "' 2> '" + err.string() + "'";
  const int status = std::system(cmd.c_str());
  RunResult r;
  r.exited = status != -1 && WIFEXITED(status);
  r.code = r.exited ? WEXITSTATUS(status) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

// Runs `env prism args` in `dir`. `args` and `env` are shell text ("demo --steps 5",
// "PRISM_THREADS=1").
inline RunResult run_prism(const std::string& args, const fs::path& dir,
                           const std::string& env = "") {
  return run_shell((env.empty() ? "" : "env " + env + " ") + "{prism} " + args, dir);
}

// The mpirun options every test launch needs: as root Open MPI refuses to start without
// --allow-run-as-root (harmless otherwise); --oversubscribe lets 2 ranks start on a 1-core
// machine. `timeout` stops a launch that would hang (a failure, not a wait). Under `make asan`
// LeakSanitizer would report Open MPI's own allocations at exit (120 kB in 3,300 blocks for a
// bare MPI_Init/MPI_Finalize program, measured), from components it loaded with dlopen and has
// unloaded by then, so their stacks end in "<unknown module>" and no suppression can name them:
// leak checking is off in the ranks (LSAN_OPTIONS), while ASan's and UBSan's error checks stay
// on, and the code the ranks share with one process is leak-checked by every other CLI test.
inline const char* kMpirun =
    "env LSAN_OPTIONS=detect_leaks=0 timeout 120 mpirun --allow-run-as-root --oversubscribe";

// `env mpirun -np N prism ARGS` in `dir`.
inline RunResult run_mpi(int ranks, const std::string& args, const fs::path& dir,
                         const std::string& env = "") {
  return run_shell((env.empty() ? "" : "env " + env + " ") + std::string(kMpirun) + " -np " +
                       std::to_string(ranks) + " {prism} " + args,
                   dir);
}

inline bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace prism::cli_test
