include(GoogleTest)

# locus_test(NAME <target> LABEL unit|privileged|fault|fuzz|lab SOURCES ... [LIBS ...])
#
# One GoogleTest binary; each TEST becomes its own ctest entry carrying LABEL.
# A GTEST_SKIP is reported by ctest as skipped (not passed), so a skip is visible.
function(locus_test)
  cmake_parse_arguments(ARG "" "NAME;LABEL;TIMEOUT" "SOURCES;LIBS" ${ARGN})
  if(NOT ARG_LABEL)
    message(FATAL_ERROR "locus_test(${ARG_NAME}) needs a LABEL")
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  # Fixtures are found from the source tree whatever the working directory
  # (tests/common/test_paths.h).
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_LIBS} locus_test_paths
                        GTest::gmock GTest::gtest_main)
  gtest_discover_tests(${ARG_NAME}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    DISCOVERY_TIMEOUT 60
    PROPERTIES LABELS ${ARG_LABEL} TIMEOUT ${ARG_TIMEOUT}
               SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
endfunction()
