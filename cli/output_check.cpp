// A check before a long run that its output files can be written, so a typo in --trace fails
// in a millisecond instead of after training. (write_text_file still reports any later failure.)
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "cli/commands.h"
#include "kernels/types.h"

namespace prism::cli {

void check_writable(const std::string& path, const char* what) {
  namespace fs = std::filesystem;
  auto fail = [&](const std::string& why) {
    throw Error(fmt::format("cannot write the {} to {}: {}", what, path, why));
  };
  if (path.empty()) fail("empty file name");
  std::error_code ec;
  const fs::path p(path);
  if (fs::is_directory(p, ec)) fail("it is a directory");
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) fail(fmt::format("directory {} does not exist", dir.string()));
  const bool exists = fs::exists(p, ec);
  const std::string target = exists ? path : dir.string();
  if (::access(target.c_str(), W_OK) != 0) fail(std::strerror(errno));
}

}  // namespace prism::cli
