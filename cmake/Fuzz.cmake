# PRISM_FUZZ=ON: a libFuzzer build (tests/fuzz/, `make fuzz`), clang only. The whole build
# directory is a fuzz build: every prism target is compiled with -fsanitize=fuzzer-no-link (the
# coverage libFuzzer steers by) on top of PRISM_SANITIZE's AddressSanitizer and
# UndefinedBehaviorSanitizer (cmake/Sanitizers.cmake), which this turns on; the fuzz targets
# themselves link with -fsanitize=fuzzer (libFuzzer's main). The CUDA backend and the benches
# are off. Included before the dependencies are looked up, so the overrides below count.
if(PRISM_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "PRISM_FUZZ=ON needs clang (libFuzzer), found ${CMAKE_CXX_COMPILER_ID}: "
                        "configure with -DCMAKE_CXX_COMPILER=clang++-14 (or run `make fuzz`)")
  endif()
  set(PRISM_SANITIZE ON)
  set(PRISM_CUDA OFF)
  set(PRISM_BUILD_BENCH OFF)
  add_compile_options(-fsanitize=fuzzer-no-link)
  # cmake/Warnings.cmake's GCC-only -Wshadow=local would be one clang warning per file, and the
  # instrumentation keeps `#pragma omp simd` loops from vectorizing (-Wpass-failed): both noise.
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-Wno-unknown-warning-option>
                      $<$<COMPILE_LANGUAGE:CXX>:-Wno-pass-failed>)
  message(STATUS "prism: fuzz build (libFuzzer, ASan, UBSan; no CUDA, no benches)")
endif()
