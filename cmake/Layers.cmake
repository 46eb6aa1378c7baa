# The layer rule (docs/DESIGN.md, "Layers"): a layer includes only itself and the layers below
# it. Checked here, when configuring, so a change that reaches up fails before it builds: for
# each source folder, the project folders its #include "..." lines may name. A folder missing
# from the table is not checked; tests/ and bench/ may include everything.
#
#   profiler <- kernels <- kernels/opinfo <- kernels/lab
#                  ^
#                tensor <- nn <- analysis <- cli
#   exercises (the learners' kernels, layers and profiler pieces, and their checker) sit on
#   kernels, kernels/opinfo, kernels/lab (the checker times with the lab), tensor and nn (an
#   exercise writes an nn::Module), and analysis (exercise 16 is graded with prism compare's
#   statistics and bottleneck map). examples/ (a learner's own programs) may use every library
#   but the command line.
set(_prism_layers
  "profiler:profiler"
  "kernels:profiler,kernels"
  "kernels/opinfo:profiler,kernels,kernels/opinfo"
  "kernels/lab:profiler,kernels,kernels/opinfo,kernels/lab"
  "tensor:profiler,kernels,tensor"
  "nn:profiler,tensor,nn"
  "analysis:profiler,kernels,tensor,nn,analysis"
  "cli:profiler,kernels,kernels/opinfo,kernels/lab,tensor,nn,analysis,cli"
  "exercises:profiler,kernels,kernels/opinfo,kernels/lab,tensor,nn,analysis,exercises"
  "examples:profiler,kernels,kernels/opinfo,kernels/lab,tensor,nn,analysis,examples")
set(_prism_project_dirs profiler kernels tensor nn analysis cli exercises examples bench tests modules)

# An op folder's opinfo.cpp is part of kernels/opinfo (kernels/ops/<op>/opinfo.cpp), and its
# drivers.cpp of the tests (tests/ops/drivers.h), which may include anything.
function(_prism_include_layer path out)  # "kernels/lab/x.h" -> kernels/lab; "kernels/x.h" -> kernels
  if(path MATCHES "^kernels/ops/[a-z0-9_]+/opinfo[a-z_]*\\.cpp$")
    set(${out} kernels/opinfo PARENT_SCOPE)
  elseif(path MATCHES "^kernels/ops/[a-z0-9_]+/drivers\\.cpp$")
    set(${out} tests PARENT_SCOPE)
  elseif(path MATCHES "^kernels/(lab|opinfo)/")
    string(REGEX REPLACE "^(kernels/[a-z]+)/.*" "\\1" _sub "${path}")
    set(${out} ${_sub} PARENT_SCOPE)
  else()
    string(REGEX REPLACE "/.*" "" _top "${path}")
    set(${out} ${_top} PARENT_SCOPE)
  endif()
endfunction()

foreach(_entry ${_prism_layers})
  string(REPLACE ":" ";" _pair "${_entry}")
  list(GET _pair 0 _layer)
  list(GET _pair 1 _allowed)
  string(REPLACE "," ";" _allowed "${_allowed}")
  file(GLOB_RECURSE _files CONFIGURE_DEPENDS
       ${PROJECT_SOURCE_DIR}/${_layer}/*.h ${PROJECT_SOURCE_DIR}/${_layer}/*.cpp
       ${PROJECT_SOURCE_DIR}/${_layer}/*.cu ${PROJECT_SOURCE_DIR}/${_layer}/*.cuh)
  if(_layer STREQUAL "kernels/opinfo")
    file(GLOB _op_infos CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/kernels/ops/*/opinfo*.cpp)
    list(APPEND _files ${_op_infos})
  endif()
  foreach(_file ${_files})
    file(RELATIVE_PATH _rel ${PROJECT_SOURCE_DIR} ${_file})
    _prism_include_layer(${_rel} _own)
    if(NOT _own STREQUAL _layer)
      continue()  # kernels/lab's and kernels/opinfo's files are checked under their own entry
    endif()
    file(STRINGS ${_file} _includes REGEX "^#include \"[a-z_]+/")
    foreach(_line ${_includes})
      string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" _inc "${_line}")
      _prism_include_layer(${_inc} _target)
      list(FIND _prism_project_dirs ${_target} _is_project)
      list(FIND _allowed ${_target} _ok)
      if(_is_project GREATER_EQUAL 0 AND _ok LESS 0)
        string(REPLACE ";" ", " _names "${_allowed}")
        message(FATAL_ERROR "${_rel} includes \"${_inc}\": ${_layer}/ may include only "
                            "${_names} (docs/DESIGN.md, \"Layers\")")
      endif()
    endforeach()
  endforeach()
endforeach()
