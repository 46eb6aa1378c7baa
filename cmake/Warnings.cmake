# Warnings and instruction-set flags applied to prism's own targets (not to dependencies).
set(PRISM_WARNINGS -Wall -Wextra -Wpedantic -Wshadow=local -Wno-unknown-pragmas)
# GCC 12 at -O3 reports a false -Wrestrict inside libstdc++'s own char_traits when it inlines
# string concatenation (GCC bug 105651, fixed in GCC 13); it points at no line of ours.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  list(APPEND PRISM_WARNINGS -Wno-restrict)
endif()

set(PRISM_ARCH_FLAGS "")
if(PRISM_NATIVE)
  include(CheckCXXCompilerFlag)
  check_cxx_compiler_flag(-march=native PRISM_HAS_MARCH_NATIVE)
  if(PRISM_HAS_MARCH_NATIVE)
    set(PRISM_ARCH_FLAGS "-march=native")
  endif()
endif()

function(prism_target_defaults target)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${PRISM_WARNINGS}>)
  if(PRISM_ARCH_FLAGS)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${PRISM_ARCH_FLAGS}>)
  endif()
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR}/generated)
  prism_library_defaults(${target})  # cmake/Libraries.cmake: shared-library flags, the backend
endfunction()
