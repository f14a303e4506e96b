// Where the tests find the source tree (fixtures, policies) and the programs
// they run. The values live in test_paths.cc, which CMake generates in each
// build tree, rather than in -D flags: ccache shares an object between two
// checkouts only when the compiler command is the same, and a -D with an
// absolute path in it never is (cmake/LocusCcache.cmake).
#ifndef LOCUS_TESTS_COMMON_TEST_PATHS_H_
#define LOCUS_TESTS_COMMON_TEST_PATHS_H_

namespace locus::test_paths {
extern const char kSourceDir[];
extern const char kLocusd[];
extern const char kLocusctl[];
extern const char kFaultTarget[];
extern const char kLabMemhog[];
extern const char kSyntheticThreads[];
}  // namespace locus::test_paths

#define LOCUS_SOURCE_DIR ::locus::test_paths::kSourceDir
#define LOCUSD_PATH ::locus::test_paths::kLocusd
#define LOCUSCTL_PATH ::locus::test_paths::kLocusctl
#define FAULT_TARGET_PATH ::locus::test_paths::kFaultTarget
#define LAB_MEMHOG_PATH ::locus::test_paths::kLabMemhog
#define SYNTHETIC_THREADS_PATH ::locus::test_paths::kSyntheticThreads

#endif  // LOCUS_TESTS_COMMON_TEST_PATHS_H_
