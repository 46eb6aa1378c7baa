# CUDA is optional and auto-detected: when a CUDA compiler exists and PRISM_CUDA is ON, the CUDA
# backend is compiled (a GPU is not needed to build it, only to run it).
set(PRISM_HAS_CUDA OFF)
if(PRISM_CUDA)
  # nvcc is usually not on PATH in a Debian image with the NVIDIA toolkit; look where the
  # toolkit installs it by default before giving up.
  if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
    find_program(PRISM_NVCC nvcc HINTS /usr/local/cuda/bin)
    if(PRISM_NVCC)
      set(CMAKE_CUDA_COMPILER ${PRISM_NVCC})
    endif()
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # Hopper (H100/H200) machine code plus compute_90 PTX, which newer GPUs JIT-compile. Set
    # before enable_language, which would otherwise pick the compiler's own default; override
    # with -DPRISM_CUDA_ARCHITECTURES=80 (A100), 89 (L4, RTX 40xx), ...
    set(PRISM_CUDA_ARCHITECTURES "90" CACHE STRING "CUDA architectures to compile for")
    set(CMAKE_CUDA_ARCHITECTURES ${PRISM_CUDA_ARCHITECTURES})
    enable_language(CUDA)
    find_package(CUDAToolkit)
    if(CUDAToolkit_FOUND)
      set(PRISM_HAS_CUDA ON)
      # C++17: CMake 3.25 does not know how to ask nvcc 13 for C++20; the kernels need no more.
      set(CMAKE_CUDA_STANDARD 17)
      message(STATUS "prism: CUDA backend ON (${CMAKE_CUDA_COMPILER}, arch ${CMAKE_CUDA_ARCHITECTURES})")
    endif()
  endif()
endif()
if(NOT PRISM_HAS_CUDA)
  message(STATUS "prism: CUDA backend OFF (no CUDA compiler found, or PRISM_CUDA=OFF)")
endif()
