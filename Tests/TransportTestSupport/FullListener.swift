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
        let descriptor = LoopbackSocket.make()
        listener = descriptor
        guard let bound = LoopbackSocket.listens(descriptor, onPort: 0, backlog: 0) else {
            throw ServerSocketError.system("listen", errno)
        }
        port = bound
        // Fill the queue: connect non-blocking a few times; the kernel stops completing handshakes.
        for _ in 0..<4 {
            let filler = LoopbackSocket.make()
            _ = fcntl(filler, F_SETFL, fcntl(filler, F_GETFL) | O_NONBLOCK)
            _ = LoopbackSocket.connects(filler, toPort: port)
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
