// Output files that are never half-written: every file prism writes (a trace, a JSON record, a
// checkpoint, a baseline) goes through here, and every path is checked before the long work
// that produces it begins.
//
// The protocol (docs/RELIABILITY.md):
//   1. check_output_path, before the run: the target is absent or a writable regular file (or,
//      for text outputs, a device or FIFO, or a name under /dev/ such as /dev/stdout: written in
//      place, appended to, is_stream_name), its directory exists, and a
//      file can really be created there (a probe, not just access(2): root passes access() on a
//      read-only file system, and /proc refuses files access() allows).
//   2. write_output_file, at the end: the bytes go to "<name>.tmp-<pid>-XXXXXX" beside the
//      target, are flushed and fsynced, and the temporary is renamed over the name, so a reader,
//      a full disk or a killed run sees the old file or the new one, never a part. On failure
//      the temporary is removed and the error carries the OS reason (strerror).
//   3. Temporaries left by a run that was killed (their pid is no longer alive) are removed the
//      next time the same target is checked or written.
// A symlink is followed, hop by hop, as the shell's `>` would do: the file it points to is
// replaced or created (atomically, in its own directory) and the link is kept, dangling or not;
// a loop of links is an error (ELOOP).
#pragma once

#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace prism::profiler {

enum class OutputKind {
  file,            // a regular file only (checkpoints: a FIFO or a device is refused)
  file_or_stream,  // also a character device or a FIFO, written in place (--json /dev/stdout)
};

// Throws std::runtime_error "cannot write the <what> to <path>: <reason>" when the path cannot
// be written; removes stale temporaries of this target.
void check_output_path(const std::string& path, const std::string& what,
                       OutputKind kind = OutputKind::file_or_stream);

// Writes the file atomically (protocol above). `write` gets the open file and returns false on
// a failed write (errno set); throws std::runtime_error "cannot write <path>: <reason>".
void write_output_file(const std::string& path, const std::function<bool(std::FILE*)>& write,
                       OutputKind kind = OutputKind::file_or_stream);

// True for a name under /dev/ or /proc/self/fd/ (/dev/stdout, /dev/null, /proc/self/fd/3): a
// stream the user named, written in place and appended to, whatever it leads to: a terminal, a
// pipe (whose /proc link names no file, "pipe:[N]"), or a file the shell redirected stdout to,
// which a rename would take away from the shell's descriptor.
bool is_stream_name(const std::string& path);

// The file `path` names once symlinks are followed hop by hop (a dangling link names the file
// it points to); nullopt for a loop.
std::optional<std::filesystem::path> resolve_output_path(const std::string& path);

// write_output_file for a text.
void write_text_file(const std::string& path, const std::string& text);

}  // namespace prism::profiler
