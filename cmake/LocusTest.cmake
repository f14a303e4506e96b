include(GoogleTest)

# locus_test(NAME <target> LABEL unit|privileged|fault|fuzz|lab SOURCES ... [LIBS ...])
#
# One GoogleTest binary; each TEST becomes its own ctest entry carrying LABEL.
# A GTEST_SKIP is reported by ctest as skipped (not passed), so a skip is visible.
#
# LOCUS_TEST_LABELS: the labels whose tests this tree builds and registers
# (all of them unless set). A test of another label stays a target, outside
# `all` (built when something asks for it: the lab runs a privileged test in
# its guests), with no ctest entry. tests/run.sh's GCC tree sets "fault":
# its unit and privileged tests run in the sanitizer tree, and compiling
# them in both trees took a fresh machine a third of its compile time.
set(LOCUS_TEST_LABELS "unit;privileged;fault" CACHE STRING
    "Labels whose GoogleTest binaries this tree builds and registers")
function(locus_test)
  cmake_parse_arguments(ARG "" "NAME;LABEL;TIMEOUT" "SOURCES;LIBS" ${ARGN})
  if(NOT ARG_LABEL)
    message(FATAL_ERROR "locus_test(${ARG_NAME}) needs a LABEL")
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  set(elsewhere "")
  if(NOT ARG_LABEL IN_LIST LOCUS_TEST_LABELS)
    set(elsewhere EXCLUDE_FROM_ALL)
  endif()
  add_executable(${ARG_NAME} ${elsewhere} ${ARG_SOURCES})
  # Fixtures are found from the source tree whatever the working directory
  # (tests/common/test_paths.h).
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_LIBS} locus_test_paths
                        GTest::gmock GTest::gtest_main)
  if(elsewhere)
    return()
  endif()
  gtest_discover_tests(${ARG_NAME}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    DISCOVERY_TIMEOUT 60
    PROPERTIES LABELS ${ARG_LABEL} TIMEOUT ${ARG_TIMEOUT}
               SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
endfunction()
