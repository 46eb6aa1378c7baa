#include "cli/command.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace prism::cli {

namespace {

// Built on first use: the commands register from static objects in other files, whose
// initialisation order relative to a namespace-scope list here is unspecified.
std::vector<CommandSpec>& commands() {
  static std::vector<CommandSpec> all;
  return all;
}

}  // namespace

RegisteredCommand::RegisteredCommand(const CommandSpec& spec) {
  for (const CommandSpec& c : commands()) {
    const bool same_name = std::strcmp(c.name, spec.name) == 0 &&
                           (c.parent == spec.parent ||
                            (c.parent && spec.parent && !std::strcmp(c.parent, spec.parent)));
    if (same_name || c.order == spec.order) {
      // Before main(): nothing could catch an exception, and the mistake is the source's.
      std::fprintf(stderr, "prism: commands '%s' and '%s' are registered with the same %s\n",
                   c.name, spec.name, same_name ? "name" : "order");
      std::abort();
    }
  }
  commands().push_back(spec);
}

std::vector<CommandSpec> registered_commands() {
  std::vector<CommandSpec> sorted = commands();
  std::sort(sorted.begin(), sorted.end(),
            [](const CommandSpec& a, const CommandSpec& b) { return a.order < b.order; });
  return sorted;
}

}  // namespace prism::cli
