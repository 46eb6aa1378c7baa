// What the docs test does with each documented command: run it cheaply, or skip it with a reason.
// Both tables live in cheap_rules.cpp, one row per rule, and `prism_docs_check --rules` prints
// them (tests/docs/README.md shows the same).
//
// A command runs when its program is build/prism or another build/NAME the test was given
// (--bin NAME=PATH), nothing on the skip list matches it, and then:
//   - build/NAME becomes the built binary's path, a leading `time` is dropped, a `| less` pager
//     is dropped, and a word naming a path in the source tree (bench/baselines) becomes that
//     path, since the command runs in a scratch directory rather than the repository root;
//   - the flag rules shrink its sizes: fewer steps, shorter durations, the smallest size.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace prism::docs_check {

struct Setup {
  std::map<std::string, std::string> bins;  // build/NAME -> the built file
  std::string source_dir;                   // where source-tree paths in a command point
};

struct Plan {
  bool run = false;
  std::string skip_reason;           // when !run
  std::string command;               // the command to run, when run
  std::vector<std::string> changes;  // what the rules did, one line each: "--steps 40 -> 8"
};

Plan plan_command(const std::string& doc_command, const Setup& setup);

// The flag rules and the skip list as text, one rule a line.
std::string describe_rules();

}  // namespace prism::docs_check
