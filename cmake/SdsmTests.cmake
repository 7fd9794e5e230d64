# SdsmTests.cmake - how the test folders declare their tests.
#
# Every test carries two kinds of labels: its tier (unit, mp, omp, fault,
# fuzz, cluster, slurm, trace, knob: what it needs to run, see
# tests/CMakeLists.txt) and the folder it is declared in (tests/proto ->
# "proto", apps/cg -> "apps"), so `ctest -L '^proto$'` runs the tests of
# tests/proto.  (ctest -L takes a regular expression: "mp" alone also
# matches "omp".)
#
#   sdsm_test_folder(<label>)
#       at the top of a folder's CMakeLists.txt: every test the folder
#       declares gets <label> as well, once the folder is read (even if it
#       returns early).
#
#   sdsm_mp_test(NAME <test> RANKS <n> [THREADS <t>] [PROTOCOL <p>]
#                [LIMIT <s>] [TIMEOUT <s>] [LABELS <tier>...] [ENV <k=v>...]
#                [PASS <regex> [FAIL <regex>...]] [EXPECT <mp_expect.sh options>...]
#                [SDSMRUN <more sdsmrun options>...]
#                COMMAND <program> [<args>...])
#       a job of <n> ranks started by sdsmrun with a time limit of LIMIT
#       seconds (default 60; ctest's TIMEOUT defaults to LIMIT + 30).  PASS:
#       the output must match <regex> and hold none of the FAIL regexes
#       (default: the job-failure messages, SDSM_MP_FAILED); EXPECT: the job runs under
#       tests/mp/mp_expect.sh with those options (exit status, messages,
#       time, leftovers).  LABELS defaults to mp.

set(SDSM_MP_FAILED "sdsmrun: stopping the job;: sdsm_abort\\(;: fatal: ")
set(SDSM_MP_EXPECT bash ${PROJECT_SOURCE_DIR}/tests/mp/mp_expect.sh)

# Also, where a test does not set SDSM_HOST_SHARE itself, it runs with it
# off: a job on one host maps one copy of the shared memory by default and
# so runs no protocol at all, and the tests are there to check the protocol,
# which is what runs between hosts (the tests of one copy say so).
# -DSDSM_TEST_HOST_SHARE=1 runs every such test with one copy instead.
set(SDSM_TEST_HOST_SHARE 0 CACHE STRING "SDSM_HOST_SHARE for the tests that do not set it")
function(_sdsm_label_folder_tests label)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(t IN LISTS tests)
    get_test_property(${t} ENVIRONMENT env)
    if(NOT "${env}" MATCHES "SDSM_HOST_SHARE=")
      set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT SDSM_HOST_SHARE=${SDSM_TEST_HOST_SHARE})
    endif()
    get_property(labels TEST ${t} PROPERTY LABELS)
    if(NOT label IN_LIST labels)
      set_property(TEST ${t} APPEND PROPERTY LABELS ${label})
    endif()
  endforeach()
endfunction()

# (Once per folder: the functions of apps/CMakeLists.txt call it for the
# app folders they declare tests in.)
function(sdsm_test_folder label)
  get_property(done DIRECTORY PROPERTY SDSM_TEST_FOLDER)
  if(done)
    return()
  endif()
  set_property(DIRECTORY PROPERTY SDSM_TEST_FOLDER ${label})
  # (A deferred call reads its arguments when it runs: pass the value.)
  cmake_language(EVAL CODE "cmake_language(DEFER CALL _sdsm_label_folder_tests [[${label}]])")
endfunction()

function(sdsm_mp_test)
  cmake_parse_arguments(PARSE_ARGV 0 T "" "NAME;RANKS;THREADS;PROTOCOL;LIMIT;TIMEOUT;PASS"
    "LABELS;ENV;EXPECT;SDSMRUN;COMMAND;FAIL")
  if(NOT T_NAME OR NOT T_RANKS OR NOT T_COMMAND)
    message(FATAL_ERROR "sdsm_mp_test: NAME, RANKS and COMMAND are required")
  endif()
  if(NOT T_LIMIT)
    set(T_LIMIT 60)
  endif()
  if(NOT T_TIMEOUT)
    math(EXPR T_TIMEOUT "${T_LIMIT} + 30")
  endif()
  if(NOT T_LABELS)
    set(T_LABELS mp)
  endif()
  set(run $<TARGET_FILE:sdsmrun> -n ${T_RANKS})
  if(T_THREADS)
    list(APPEND run --threads ${T_THREADS})
  endif()
  if(T_PROTOCOL)
    list(APPEND run --protocol ${T_PROTOCOL})
  endif()
  list(APPEND run --timeout ${T_LIMIT} ${T_SDSMRUN} ${T_COMMAND})
  if(DEFINED T_EXPECT OR "EXPECT" IN_LIST T_KEYWORDS_MISSING_VALUES)
    set(run ${SDSM_MP_EXPECT} ${T_EXPECT} -- ${run})
  endif()
  add_test(NAME ${T_NAME} COMMAND ${run})
  set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT})
  if(NOT T_FAIL)
    set(T_FAIL "${SDSM_MP_FAILED}")
  endif()
  if(T_PASS)
    set_tests_properties(${T_NAME} PROPERTIES PASS_REGULAR_EXPRESSION "${T_PASS}"
      FAIL_REGULAR_EXPRESSION "${T_FAIL}")
  endif()
  if(T_ENV)
    set_tests_properties(${T_NAME} PROPERTIES ENVIRONMENT "${T_ENV}")
  endif()
endfunction()

