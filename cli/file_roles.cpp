#include "cli/file_roles.h"

#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "nn/data/idx.h"
#include "profiler/machine.h"
#include "profiler/output_file.h"

namespace prism::cli {

namespace {

namespace fs = std::filesystem;

// What a path names, as far as "is it the same file" goes (see file_roles.h).
struct Identity {
  enum class Kind { absent, regular, stream } kind = Kind::absent;
  dev_t dev = 0;
  ino_t ino = 0;
  fs::path resolved;  // absent: the absolute path, links of its existing prefix resolved
};

Identity identify(const std::string& path) {
  Identity id;
  struct stat st {};
  // A stream by its name (profiler/output_file.h): /dev/stdout redirected to a file reaches a
  // regular file through /proc/self/fd/1, but it is the shell's stream the user named.
  if (profiler::is_stream_name(path)) {
    id.kind = Identity::Kind::stream;
  } else if (::stat(path.c_str(), &st) == 0) {  // follows symbolic links
    // A directory or a device is no file an output replaces.
    id.kind = S_ISREG(st.st_mode) ? Identity::Kind::regular : Identity::Kind::stream;
    id.dev = st.st_dev;
    id.ino = st.st_ino;
  } else {
    // Absent, or a dangling link: the file that writing would create. weakly_canonical resolves
    // the links of the existing prefix before it folds the ../ after them (folding first would
    // take sub/../x for ./x when sub is a link elsewhere).
    std::error_code ec;
    const fs::path absolute = fs::absolute(profiler::resolve_output_path(path).value_or(path), ec);
    id.resolved = fs::weakly_canonical(absolute, ec);
    if (ec) id.resolved = absolute.lexically_normal();
  }
  return id;
}

bool same_file(const Identity& a, const Identity& b) {
  using K = Identity::Kind;
  if (a.kind == K::regular && b.kind == K::regular) return a.dev == b.dev && a.ino == b.ino;
  if (a.kind == K::absent && b.kind == K::absent) return a.resolved == b.resolved;
  return false;  // a stream is never "the same"; an existing file is not an absent one
}

}  // namespace

std::string report_beside_trace(const std::string& trace_path) {
  // A trace sent to a stream (/dev/null, /dev/stdout, a FIFO) has no folder of its own: its
  // page would land in /dev.
  if (identify(trace_path).kind == Identity::Kind::stream) return "";
  return (fs::path(trace_path).parent_path() / "report.html").string();
}

void CommandFiles::input(const std::string& flag, const std::string& path) {
  if (!path.empty()) inputs.push_back({flag, path});
}

void CommandFiles::output(const std::string& flag, const std::string& path) {
  if (!path.empty()) outputs.push_back({flag, path});
}

void CommandFiles::data_set(const std::string& spec, bool default_is_mnist) {
  // The same order of cases as load_train_data (train_data.cpp).
  if (spec == "text" || spec == "shapes" || spec == "spirals") return;
  std::string dir;
  std::error_code ec;
  if (spec == "fashion-mnist" || (spec.empty() && default_is_mnist)) {
    dir = nn::data::fashion_mnist_dir();
  } else if (!spec.empty() && fs::is_directory(spec, ec)) {
    dir = spec;
  } else {
    input("--data", spec);
    return;
  }
  for (const bool train : {true, false}) {
    for (const char* kind : {"images", "labels"}) {
      input("--data's " + std::string(train ? "train " : "test ") + kind,
            nn::data::find_mnist_file(dir, train, kind));
    }
  }
}

CommandFiles files_of(const CommandLine& cl) {
  CommandFiles f;
  if (cl.action.files) cl.action.files(f);
  // Read by every command that shows a roof or splits kernels (profiler/machine.h): no output may
  // replace it (`--json` naming it would leave the next run measuring again, for seconds).
  if (!f.outputs.empty()) f.input("the machine cache", profiler::default_machine_cache_path());
  return f;
}

void check_file_roles(const CommandFiles& files) {
  // An input that does not exist cannot be destroyed (its command reports it missing), and two
  // absent names must not count as one: `--data text --save text` reads the built-in set.
  std::vector<Identity> inputs;
  std::vector<const FileArg*> input_args;
  for (const FileArg& a : files.inputs) {
    Identity id = identify(a.path);
    if (id.kind != Identity::Kind::regular) continue;
    inputs.push_back(std::move(id));
    input_args.push_back(&a);
  }
  std::vector<Identity> outputs;
  for (size_t i = 0; i < files.outputs.size(); ++i) {
    const FileArg& out = files.outputs[i];
    const Identity id = identify(out.path);
    for (size_t j = 0; j < inputs.size(); ++j) {
      if (same_file(id, inputs[j])) {
        const FileArg& in = *input_args[j];
        throw UsageError(out.flag + " (" + out.path + ") is the input " + in.flag + " (" + in.path +
                         "): writing it would destroy the input; give the output a name of its "
                         "own");
      }
    }
    for (size_t j = 0; j < i; ++j) {
      if (same_file(id, outputs[j])) {
        throw UsageError(files.outputs[j].flag + " and " + out.flag + " name the same file (" +
                         out.path + "): the second would overwrite the first; give each its own");
      }
    }
    outputs.push_back(id);
  }
}

}  // namespace prism::cli
