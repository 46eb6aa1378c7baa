# PRISM_SANITIZE=ON builds everything with AddressSanitizer + UndefinedBehaviorSanitizer.
# UBSan findings abort (-fno-sanitize-recover) so a test run cannot pass over one.
#
# PRISM_TSAN=ON builds everything with ThreadSanitizer (`make tsan` runs the threaded suites).
# The two cannot share a build: ASan and TSan each own the process's shadow memory.
option(PRISM_TSAN "Build with ThreadSanitizer (GCC, with LLVM's OpenMP runtime and Archer)" OFF)
if(PRISM_SANITIZE AND PRISM_TSAN)
  message(FATAL_ERROR "prism: PRISM_SANITIZE (ASan+UBSan) and PRISM_TSAN (ThreadSanitizer) cannot "
                      "be combined in one build; configure a build directory for each (make asan, "
                      "make tsan)")
endif()

set(PRISM_SANITIZE_FLAGS "")
if(PRISM_SANITIZE)
  set(PRISM_SANITIZE_FLAGS "-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer")
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
  # GCC 12's AVX-512 intrinsics make an intentionally undefined vector as `__m512 __Y = __Y;`
  # (_mm512_undefined_ps); inlined through Eigen's packet math under ASan it is reported as
  # -Wuninitialized in every file that includes Eigen (and under TSan too, below). That is the
  # compiler's own header, not our code, and the normal build (-Wall -Wextra, no sanitizer) still
  # reports any real case.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-Wno-uninitialized>)
  endif()
endif()

# ThreadSanitizer and OpenMP. TSan sees the synchronisation it instruments or intercepts (atomics
# and mutexes in instrumented code, pthread calls), and GCC's OpenMP runtime, libgomp, is neither:
# its barriers and the hand-over of work to pooled threads are futexes and atomics in an
# uninstrumented library. So every `#pragma omp parallel` that reads what the serial code wrote
# before it is reported as a race, and no suppression file can help (the report is in our code,
# the missing happens-before edge in libgomp). The usual remedies: a libgomp rebuilt for TSan
# (a GCC built from source), OMP_NUM_THREADS=1 (then the OpenMP paths are not tested at all),
# or LLVM's OpenMP runtime, libomp, with Archer: an OMPT tool shipped with it that tells TSan
# about every OpenMP barrier, task and lock. We take the last. libomp implements libgomp's ABI
# (the GOMP_* entry points GCC emits), so the code is still compiled by GCC with -fopenmp, and
# only the link swaps libgomp for libomp (Debian: libomp-dev, which `make tsan` installs).
# libarcher is linked in too (TSan's link never uses --as-needed, so it stays a dependency):
# libomp looks for a tool in the process first, so Archer is active in every test and program of
# the build without OMP_TOOL_LIBRARIES. Run with TSAN_OPTIONS=ignore_noninstrumented_modules=1,
# as Archer's documentation recommends, so libomp's own uninstrumented accesses are not checked.
if(PRISM_TSAN)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    message(FATAL_ERROR "prism: PRISM_TSAN expects GCC (it swaps GCC's libgomp for LLVM's libomp)")
  endif()
  file(GLOB _prism_llvm_libdirs /usr/lib/llvm-*/lib)
  list(SORT _prism_llvm_libdirs COMPARE NATURAL ORDER DESCENDING)  # the newest LLVM first
  find_library(PRISM_ARCHER_LIBRARY NAMES archer HINTS ${_prism_llvm_libdirs})
  if(NOT PRISM_ARCHER_LIBRARY)
    message(FATAL_ERROR "prism: PRISM_TSAN needs LLVM's OpenMP runtime and its Archer tool "
                        "(libarcher.so): apt-get install libomp-dev")
  endif()
  # libomp from the same LLVM as Archer: the tool and the runtime speak one OMPT version.
  get_filename_component(_prism_archer_dir ${PRISM_ARCHER_LIBRARY} DIRECTORY)
  find_library(PRISM_LIBOMP_LIBRARY NAMES omp libomp.so.5 HINTS ${_prism_archer_dir} NO_DEFAULT_PATH)
  if(NOT PRISM_LIBOMP_LIBRARY)
    message(FATAL_ERROR "prism: PRISM_TSAN: no libomp beside ${PRISM_ARCHER_LIBRARY}")
  endif()
  set_property(TARGET OpenMP::OpenMP_CXX PROPERTY INTERFACE_LINK_LIBRARIES
    ${PRISM_LIBOMP_LIBRARY} ${PRISM_ARCHER_LIBRARY} Threads::Threads)
  message(STATUS "prism: ThreadSanitizer, OpenMP runtime ${PRISM_LIBOMP_LIBRARY} with "
                 "${PRISM_ARCHER_LIBRARY}")

  set(PRISM_SANITIZE_FLAGS "-fsanitize=thread -fno-omit-frame-pointer")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  # The same false -Wuninitialized from GCC's AVX-512 headers as under ASan (above).
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-Wno-uninitialized>)
  endif()
  add_link_options(-fsanitize=thread)
endif()
