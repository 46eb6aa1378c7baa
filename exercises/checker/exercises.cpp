// The exercises this program has: each exercise defines its checks in its own folder
// (exercises/NN_name/check.cpp) and adds itself from a static initialiser; a checker program is
// built with one exercise's check.cpp, so it knows that one.
#include <utility>

#include "exercises/checker/checker.h"

namespace prism::exercises {

namespace {
// The exercises added (add_exercise), in the order the static initialisers ran: a function-local
// static, so it exists before the first add.
std::vector<Exercise>& added_exercises() {
  static std::vector<Exercise> v;
  return v;
}
}  // namespace

bool add_exercise(Exercise ex) {
  added_exercises().push_back(std::move(ex));
  return true;
}

const std::vector<Exercise>& all_exercises() {
  return added_exercises();
}

}  // namespace prism::exercises
