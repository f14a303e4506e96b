# Compiles through ccache when it is installed (deploy/deps.sh test installs
# it; -DLOCUS_CCACHE=OFF turns it off), so that a second build tree, or a
# fresh clone in another directory on the same machine (as CI's is), reuses
# the objects of an earlier build instead of compiling ~300 files again.
#
# A hit across directories needs the same compiler command: base_dir makes
# ccache rewrite the absolute paths under it (sources, -I, -MF) relative to
# the compiler's working directory, and hash_dir=false keeps that directory
# out of the hash (it only names the directory in the debug info). Values of
# -D are never rewritten: code compiled here must not take an absolute path
# by macro (the tests take theirs from tests/common/test_paths.h).
option(LOCUS_CCACHE "Compile through ccache when it is found" ON)
find_program(LOCUS_CCACHE_PROGRAM ccache)
if(LOCUS_CCACHE AND LOCUS_CCACHE_PROGRAM)
  # The deepest directory above both trees: a build directory outside the
  # source tree (LOCUS_BUILD_DIR=/elsewhere) still gets relative paths.
  set(base ${PROJECT_SOURCE_DIR})
  cmake_path(IS_PREFIX base ${CMAKE_BINARY_DIR} NORMALIZE binary_inside)
  while(NOT binary_inside)
    cmake_path(GET base PARENT_PATH base)
    cmake_path(IS_PREFIX base ${CMAKE_BINARY_DIR} NORMALIZE binary_inside)
  endwhile()
  # base_dir "/" would rewrite system headers too; ccache ignores it then.
  set(launcher ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${base}
      CCACHE_NOHASHDIR=true ${LOCUS_CCACHE_PROGRAM})
  set(CMAKE_C_COMPILER_LAUNCHER ${launcher})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${launcher})
  message(STATUS "ccache: ${LOCUS_CCACHE_PROGRAM} (base_dir ${base})")
endif()
