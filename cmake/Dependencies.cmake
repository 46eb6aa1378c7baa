# Every dependency comes from a Debian package; the Makefile installs the missing ones.
find_package(Eigen3 3.4 REQUIRED NO_MODULE)
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(nlohmann_json 3 REQUIRED)
find_package(fmt REQUIRED)
find_package(CLI11 REQUIRED)
if(PRISM_BUILD_TESTS)
  find_package(doctest REQUIRED)
endif()
if(PRISM_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
find_package(Threads REQUIRED)
find_package(ZLIB REQUIRED)  # gzip-compressed IDX files (Fashion-MNIST)
# Data parallelism (nn/dist/): Open MPI's C API (Debian's libopenmpi-dev; `mpirun` from
# openmpi-bin launches the ranks). Only `prism train --ddp` and `prism bench collectives` call it;
# every other command runs without a launcher.
set(MPI_CXX_SKIP_MPICXX ON)  # the C API from C++, not the removed C++ bindings
find_package(MPI REQUIRED COMPONENTS CXX)
