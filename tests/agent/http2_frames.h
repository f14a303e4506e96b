// HTTP/2 frames written by hand, for tests that speak to the agent's socket
// below gRPC (bursts a real client would never send).
#ifndef LOCUS_TESTS_AGENT_HTTP2_FRAMES_H_
#define LOCUS_TESTS_AGENT_HTTP2_FRAMES_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace locus {

inline constexpr std::string_view kHttp2Preface =
    "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
inline constexpr uint8_t kData = 0, kHeadersFrame = 1, kRstStreamFrame = 3,
                         kSettings = 4, kPing = 6, kGoaway = 7;
inline constexpr uint8_t kAck = 1, kEndHeaders = 4;

// A 9-byte header (length, type, flags, stream id), then the payload.
inline std::string Frame(uint8_t type, uint8_t flags = 0, uint32_t stream = 0,
                         const std::string& payload = "") {
  std::string f(9, '\0');
  f[0] = static_cast<char>(payload.size() >> 16);
  f[1] = static_cast<char>(payload.size() >> 8);
  f[2] = static_cast<char>(payload.size());
  f[3] = static_cast<char>(type);
  f[4] = static_cast<char>(flags);
  for (int i = 0; i < 4; ++i)
    f[5 + i] = static_cast<char>(stream >> (24 - 8 * i));
  return f + payload;
}

// The request headers of a unary GetStatus call, in HPACK literals that
// leave the peer's table alone, ended (no body follows in these tests).
inline std::string Headers(uint32_t stream) {
  auto literal = [](std::string_view prefix, std::string_view value) {
    return std::string(prefix) + static_cast<char>(value.size()) +
           std::string(value);
  };
  std::string block = "\x83\x86";  // :method POST, :scheme http
  block += literal("\x04", "/locus.v1.Agent/GetStatus");  // :path
  block += literal("\x01", "localhost");                  // :authority
  block += literal("\x0f\x10", "application/grpc");       // content-type
  block += literal(literal(std::string_view("\0", 1), "te"), "trailers");
  return Frame(kHeadersFrame, kEndHeaders, stream, block);
}

inline std::string RstStream(uint32_t stream) {
  return Frame(kRstStreamFrame, 0, stream, std::string("\0\0\0\x08", 4));
}

}  // namespace locus

#endif  // LOCUS_TESTS_AGENT_HTTP2_FRAMES_H_
