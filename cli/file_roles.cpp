#include "cli/file_roles.h"

#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "profiler/output_file.h"

namespace prism::cli {

namespace {

namespace fs = std::filesystem;

// What a path names, as far as "is it the same file" goes (see file_roles.h).
struct Identity {
  enum class Kind { absent, regular, stream } kind = Kind::absent;
  dev_t dev = 0;
  ino_t ino = 0;
  fs::path resolved;  // absent: the absolute, link-resolved, normalised path
};

Identity identify(const std::string& path) {
  Identity id;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {  // follows symbolic links
    id.kind = S_ISREG(st.st_mode) ? Identity::Kind::regular : Identity::Kind::stream;
    id.dev = st.st_dev;
    id.ino = st.st_ino;
    return id;
  }
  // Absent, or a dangling link: the file that writing would create. Absolute first
  // (weakly_canonical leaves a relative name with no existing prefix as it is), then the links
  // of the existing prefix followed and ./ and ../ folded.
  std::error_code ec;
  const fs::path absolute =
      fs::absolute(profiler::resolve_output_path(path).value_or(path), ec).lexically_normal();
  id.resolved = fs::weakly_canonical(absolute, ec);
  if (ec) id.resolved = absolute;
  return id;
}

bool same_file(const Identity& a, const Identity& b) {
  using K = Identity::Kind;
  if (a.kind == K::regular && b.kind == K::regular) return a.dev == b.dev && a.ino == b.ino;
  if (a.kind == K::absent && b.kind == K::absent) return a.resolved == b.resolved;
  return false;  // a stream is never "the same"; an existing file is not an absent one
}

void add(std::vector<FileArg>& list, const char* flag, const std::string& path) {
  if (!path.empty()) list.push_back({flag, path});
}

}  // namespace

std::string report_beside_trace(const std::string& trace_path) {
  // A trace sent to a stream (/dev/null, /dev/stdout, a FIFO) has no folder of its own: its
  // page would land in /dev.
  if (identify(trace_path).kind == Identity::Kind::stream) return "";
  return (fs::path(trace_path).parent_path() / "report.html").string();
}

CommandFiles files_of(const CommandLine& cl) {
  CommandFiles f;
  auto in = [&](const char* flag, const std::string& path) { add(f.inputs, flag, path); };
  auto out = [&](const char* flag, const std::string& path) { add(f.outputs, flag, path); };
  switch (cl.command) {
    case Command::demo:
      out("--trace", cl.demo.trace_path);
      out("--json", cl.demo.json_path);
      out("--report", cl.demo.report_path);
      break;
    case Command::train: {
      const TrainOptions& o = cl.train;
      in("--load", o.load_path);
      in("--data", o.data);
      out("--save", o.save_path);
      out("--json", o.json_path);
      out("--trace", o.trace_path);
      if (!o.report_path.empty()) {
        out("--report", o.report_path);
      } else if (!o.trace_path.empty()) {
        out("--trace's report.html", report_beside_trace(o.trace_path));  // "" for a stream
      }
      break;
    }
    case Command::machine:
      out("--json", cl.machine.json_path);
      break;
    case Command::lab:
      out("--json", cl.lab.json_path);
      break;
    case Command::bench:
      in("--load", cl.bench.load_path);
      in("--data", cl.bench.data);
      out("--json", cl.bench.json_path);
      break;
    case Command::bench_collectives:
      out("--json", cl.collectives.json_path);
      break;
    case Command::compare:
      // BASE.json CAND.json; a MODEL name that is no file is skipped as an absent input.
      for (size_t i = 0; i < cl.compare.inputs.size(); ++i) {
        in(i == 0 ? "BASE" : "CAND", cl.compare.inputs[i]);
      }
      out("--json", cl.compare.json_path);
      break;
    case Command::models:
      out("--json", cl.models.json_path);
      break;
    case Command::sweep:
      out("--json", cl.sweep.json_path);
      break;
    case Command::report:
      for (const std::string& p : cl.report.inputs) in("IN.json", p);
      out("--output", cl.report.output_path);
      break;
    case Command::gate:
      in("BASE", cl.gate.base);
      in("CAND", cl.gate.cand);
      out("--json", cl.gate.json_path);
      break;
    case Command::course:
      out("--json", cl.course.json_path);
      break;
    case Command::quantize:
      in("model_file", cl.quantize.model_path);
      in("--data", cl.quantize.data);
      out("--output", cl.quantize.output_path);
      break;
    case Command::generate:
      in("model_file", cl.generate.model_path);
      break;
    case Command::version:
    case Command::ops:
    case Command::summary:
    case Command::check:
    case Command::none:
      break;
  }
  return f;
}

void check_file_roles(const CommandFiles& files) {
  std::vector<Identity> inputs;
  for (const FileArg& a : files.inputs) inputs.push_back(identify(a.path));
  std::vector<Identity> outputs;
  for (size_t i = 0; i < files.outputs.size(); ++i) {
    const FileArg& out = files.outputs[i];
    const Identity id = identify(out.path);
    for (size_t j = 0; j < files.inputs.size(); ++j) {
      if (same_file(id, inputs[j])) {
        const FileArg& in = files.inputs[j];
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
