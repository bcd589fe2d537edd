#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// TCP sockets on 127.0.0.1 for the loopback server and for the clients and tests that speak to it
/// without a transport: the platform's socket type and the `sockaddr_in` conversions live here.
package enum LoopbackSocket {
    /// A new TCP socket's descriptor, or -1 with `errno` set.
    package static func make() -> Int32 {
        #if canImport(Glibc)
        socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        socket(AF_INET, SOCK_STREAM, 0)
        #endif
    }

    /// Connects `descriptor` to 127.0.0.1:`port`; whether it connected (`errno` says why not, and
    /// `EINPROGRESS` means a non-blocking socket is still connecting).
    package static func connects(_ descriptor: Int32, toPort port: UInt16) -> Bool {
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// Binds `descriptor` to 127.0.0.1:`port` (0 for a free one) and listens with `backlog`; the
    /// port it listens on, or `nil` with `errno` set.
    package static func listens(_ descriptor: Int32, onPort port: UInt16, backlog: Int32) -> UInt16? {
        var address = loopback(port: port)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(descriptor, generic, length) == 0 && listen(descriptor, backlog) == 0
                    && getsockname(descriptor, generic, &length) == 0
            }
        }
        return bound ? UInt16(bigEndian: address.sin_port) : nil
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        return address
    }
}
