# Runs one exercise checker for ctest and decides pass or fail (cmake -P).
#   -DPROGRAM=path          the checker executable (run with --quick)
#   -DEXPECT=regex          it must fail (exit 1: a case failed) with output matching regex
#   -DPASSES=ON             with EXPECT: it must pass instead (exit 0: correct), with output
#                           matching regex (a slow kernel's performance tier)
#   -DANY_TIER=ON           with PASSES: passing is enough, the regex is not checked (a
#                           sanitizer build, where timings mean nothing)
#   -DLEARNER_FILE=path     a learner's file: while it holds the marker "TODO(exercise)" the
#                           checker must reject it (exit 1); without the marker the learner
#                           says it is done, and it must pass
#   -DTODO_EXPECT=regex     with LEARNER_FILE: what the rejection of the untouched file must
#                           print (default: a kernel that wrote nothing)
# Exit code 1 is the checker's "a case failed"; 2 (it could not check) and a crash never count
# as the expected failure, so a wrong file cannot pass this test for the wrong reason.
# --grade-busy: ctest runs two checkers at once, each the other's busy neighbour; the tiers of the
# slow files are judged anyway (a learner's check says "not graded" instead).
execute_process(COMMAND ${PROGRAM} --quick --grade-busy RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
message("${out}${err}")

# 77: the exercise cannot run on this machine (a CUDA kernel without a GPU); the checker said why
# ("cannot run on this machine: ..."), which the test's SKIP_REGULAR_EXPRESSION turns into a skip.
if(rc EQUAL 77)
  return()
endif()

if(DEFINED LEARNER_FILE)
  file(READ ${LEARNER_FILE} source)
  string(FIND "${source}" "TODO(exercise)" at)
  if(at EQUAL -1)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "your kernel does not pass yet (exit code ${rc}); see above")
    endif()
    return()
  endif()
  if(DEFINED TODO_EXPECT)
    set(EXPECT "${TODO_EXPECT}")
  else()
    set(EXPECT "elements of [A-Za-z]+ never written")
  endif()
endif()

if(PASSES)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "expected the checker to pass this correct kernel (exit code 0), got '${rc}'")
  endif()
  if(ANY_TIER)
    return()
  endif()
  if(NOT "${out}" MATCHES "${EXPECT}")
    message(FATAL_ERROR "the checker passed it, but its output does not match: ${EXPECT}")
  endif()
  return()
endif()

if(NOT rc EQUAL 1)
  message(FATAL_ERROR "expected the checker to reject this kernel (exit code 1), got '${rc}'")
endif()
if(NOT "${out}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "the checker failed, but its output does not match: ${EXPECT}")
endif()
