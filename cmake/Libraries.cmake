# prism's libraries are shared objects (libprism_*.so) placed beside the executables in the build
# directory, found through a $ORIGIN-relative RUNPATH, so the build directory can be moved.
#
# Why shared. The CUDA backend (kernels/cuda/) is a library of its own, libprism_cuda.so, opened
# at run time on first GPU use (kernels/gpu_backend.h says why: a CPU run must not map cudart and
# cuBLAS). It registers its kernels in the registry and allocates through the same runtime as the
# program that opened it, so there must be exactly one copy of the registry, the allocators and
# the profiler in the process: the one in libprism_kernels.so and the libraries above it, which
# the programs and the backend all link (the libtorch_cpu.so / libtorch_cuda.so split).
#
# What it costs, and how that is kept small:
#   -fno-semantic-interposition  calls within a source file may be inlined and bound directly,
#                                as in an executable, though the function is exported.
#   -Wl,-Bsymbolic-functions     calls between the source files of one library are bound at link
#                                time too, not through the PLT; only calls between libraries pay
#                                an indirect jump. Without it a 1-element add (front end,
#                                registry, allocation; prism_bench_profiler BM_Add1_NoSession) was
#                                ~6 % slower than the static build; with it, the same. (It binds
#                                functions only: there is still one copy of every global, static
#                                local and typeinfo. Nothing in prism relies on an inline
#                                function having one address across libraries.)
#   -ftls-model=initial-exec     thread_locals (the profiler's per-thread context, the allocation
#                                counters, grad mode) are one %fs-relative load, as in an
#                                executable, instead of a __tls_get_addr call per access. Valid
#                                because these libraries are loaded with the program, never
#                                opened later by dlopen (the backend, which is, does not use it).
#   -Wl,--no-undefined           a library must link everything it uses, so a missing dependency
#                                is a link error here rather than at a program's start (not with
#                                the sanitizers, whose run time the program brings).
set(CMAKE_LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
set(CMAKE_BUILD_RPATH_USE_ORIGIN ON)

# Called by prism_target_defaults (cmake/Warnings.cmake) for every prism target.
function(prism_library_defaults target)
  get_target_property(_type ${target} TYPE)
  if(_type STREQUAL "SHARED_LIBRARY" OR _type STREQUAL "MODULE_LIBRARY")
    set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-fno-semantic-interposition>)
    target_link_options(${target} PRIVATE -Wl,-Bsymbolic-functions)
    # Not under the sanitizers: Clang leaves their run-time symbols for the program to provide.
    if(NOT PRISM_SANITIZE)
      target_link_options(${target} PRIVATE -Wl,--no-undefined)
    endif()
  endif()
  if(_type STREQUAL "SHARED_LIBRARY")
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-ftls-model=initial-exec>)
  endif()
  # No program depends on the CUDA backend: nothing links it, and it is part of `all` (make
  # build, make test), so a program built on its own (make demo builds only `prism`) needs no
  # nvcc run first. Without the backend, --device cuda says it is not built and how to build it.
endfunction()
