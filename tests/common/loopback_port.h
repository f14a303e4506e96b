// A TCP port for a test's server on 127.0.0.1.
#ifndef LOCUS_TESTS_COMMON_LOOPBACK_PORT_H_
#define LOCUS_TESTS_COMMON_LOOPBACK_PORT_H_

namespace locus {

// A port below the kernel's ephemeral range (ip_local_port_range) that
// 127.0.0.1 can bind now, or 0. Below the range because the thousands of
// client connections the steering tests make leave their ports in TIME_WAIT
// for a minute, and a server cannot bind a port a client still holds; each
// process starts its search at a different port.
int UnusedLoopbackPort();

}  // namespace locus

#endif  // LOCUS_TESTS_COMMON_LOOPBACK_PORT_H_
