// One exercise's checker program. CMake compiles this file once per executable with
// PRISM_EXERCISE set to the exercise's folder name, and links it with one kernel file.
#include "exercises/checker/checker.h"

#ifndef PRISM_EXERCISE
#error "build with -DPRISM_EXERCISE=\"NN_name\" (exercises/CMakeLists.txt does)"
#endif

int main(int argc, char** argv) {
  return prism::exercises::run_checker(PRISM_EXERCISE, argc, argv);
}
