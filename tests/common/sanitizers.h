// Whether the test runs in a sanitizer build (LOCUS_SANITIZE / LOCUS_FUZZ),
// for the few tests whose bounds assume uninstrumented code: address-space
// caps (ASan reserves terabytes of shadow) and wall-clock bounds.
#ifndef LOCUS_TESTS_COMMON_SANITIZERS_H_
#define LOCUS_TESTS_COMMON_SANITIZERS_H_

namespace locus::testing {

// gcc defines __SANITIZE_ADDRESS__; clang 14 only answers __has_feature.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

// How much longer instrumented code may take than a time bound written for
// an optimized build (ASan+UBSan run this code 2-4x slower).
inline constexpr int kTimeScale = kAddressSanitizer ? 5 : 1;

}  // namespace locus::testing

#endif  // LOCUS_TESTS_COMMON_SANITIZERS_H_
