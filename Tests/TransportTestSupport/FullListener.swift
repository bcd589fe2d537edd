import Foundation
import LoopbackHTTP
#if canImport(Glibc)
import Glibc
#endif

#if os(Linux)
/// A TCP listener with a backlog of one that never accepts, filled up by connections of its own,
/// so that further connection attempts hang in the SYN stage.
public final class FullListener {
    /// The port that never completes a connection.
    public let port: UInt16
    private let listener: Int32
    private var fillers: [Int32] = []

    /// Listens on 127.0.0.1 with a backlog of one and fills the queue.
    ///
    /// - Throws: `ServerSocketError.system` when the socket cannot be set up.
    public init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        listener = descriptor
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && listen(descriptor, 0) == 0
                    && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard ok else { throw ServerSocketError.system("listen", errno) }
        port = UInt16(bigEndian: address.sin_port)
        // Fill the queue: connect non-blocking a few times; the kernel stops completing handshakes.
        for _ in 0..<4 {
            let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            _ = fcntl(filler, F_SETFL, fcntl(filler, F_GETFL) | O_NONBLOCK)
            var target = address
            _ = withUnsafePointer(to: &target) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            fillers.append(filler)
        }
        usleep(200_000)
    }

    /// Closes the listener and its own connections.
    public func close() {
        for filler in fillers { _ = Glibc.close(filler) }
        _ = Glibc.close(listener)
    }
}
#endif
