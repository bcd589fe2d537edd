import Foundation
import Transport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Errors of the loopback server's socket layer.
///
/// A struct rather than an enum, so a kind added in a later release does not break an app's
/// `switch`: switch over ``kind`` (`case .closedEarly:`, ending with `default:`) and read the details
/// from the properties. Two errors are equal when their kind and details are equal.
public struct ServerSocketError: KindedError, Sendable {
    /// What went wrong, without the details: compare it or `switch` over it (`case .closedEarly:`).
    public typealias Kind = ErrorKind<ServerSocketError>

    private enum Detail: Hashable, Sendable {
        case system(String, Int32)
        case closedEarly
        case malformed(String)
        case deadlinePassed(String)
    }

    /// What went wrong.
    public let kind: Kind
    private let detail: Detail

    private init(_ detail: Detail, _ kind: Kind) { (self.detail, self.kind) = (detail, kind) }

    /// A system call failed (its name, errno).
    public static func system(_ call: String, _ code: Int32) -> ServerSocketError {
        ServerSocketError(.system(call, code), .system)
    }

    /// The peer closed the connection before a complete message arrived.
    public static let closedEarly = ServerSocketError(.closedEarly, .closedEarly)

    /// The request is not HTTP/1.1 the server understands (what is wrong).
    public static func malformed(_ detail: String) -> ServerSocketError {
        ServerSocketError(.malformed(detail), .malformed)
    }

    /// The request head or body did not arrive within its deadline (which part).
    public static func deadlinePassed(_ part: String) -> ServerSocketError {
        ServerSocketError(.deadlinePassed(part), .deadlinePassed)
    }

    /// The system call, for `Kind.system`.
    public var call: String? { if case .system(let value, _) = detail { value } else { nil } }

    /// The call's errno, for `Kind.system`.
    public var code: Int32? { if case .system(_, let value) = detail { value } else { nil } }

    /// What is wrong, for `Kind.malformed`.
    public var reason: String? { if case .malformed(let value) = detail { value } else { nil } }

    /// Which part was late, for `Kind.deadlinePassed`.
    public var part: String? { if case .deadlinePassed(let value) = detail { value } else { nil } }

    /// A readable explanation.
    public var description: String {
        switch detail {
        case .system(let call, let code): "\(call) failed: \(String(cString: strerror(code)))"
        case .closedEarly: "the peer closed the connection early"
        case .malformed(let what): "malformed request: \(what)"
        case .deadlinePassed(let what): "the request \(what) did not arrive in time"
        }
    }
}

extension ErrorKind where Failure == ServerSocketError {
    /// A system call failed (its name, errno).
    public static var system: Self { Self() }
    /// The peer closed the connection before a complete message arrived.
    public static var closedEarly: Self { Self() }
    /// The request is not HTTP/1.1 the server understands (what is wrong).
    public static var malformed: Self { Self() }
    /// The request head or body did not arrive within its deadline (which part).
    public static var deadlinePassed: Self { Self() }
    /// Every kind known to this version of the package, for an app's tests. A later version may
    /// add kinds: a `switch` still ends with `default:`.
    public static var knownValues: [Self] { [.system, .closedEarly, .malformed, .deadlinePassed] }
}

/// A connected TCP socket with a read buffer. One connection thread reads and writes it; other
/// threads only call `shutdownBoth()`, a single system call, hence the unchecked `Sendable`.
package final class ServerSocket: @unchecked Sendable {
    package let descriptor: Int32
    private var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    private var start = 0
    private var end = 0
    /// When the part of the request being read must be in (`nil`: only the per-read idle limit);
    /// `deadlinePart` names it for the error.
    private var deadline: (at: DispatchTime, part: String)?

    /// Sets (or clears, with `nil`) the deadline every later read must meet.
    func setDeadline(_ seconds: TimeInterval?, for part: String) {
        deadline = seconds.map { (DispatchTime.now() + $0, part) }
    }

    package init(descriptor: Int32) {
        self.descriptor = descriptor
        // A stuck peer must not hold a server thread forever.
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
        // Darwin has no MSG_NOSIGNAL: a write to a peer that left must fail, not raise SIGPIPE.
        _ = setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    /// Buffered bytes not yet consumed.
    var bufferedCount: Int { end - start }

    /// Reads more bytes into the buffer; `false` at end of stream.
    func fill() throws -> Bool {
        if start == end {
            start = 0
            end = 0
        } else if end == buffer.count {
            buffer.replaceSubrange(0..<(end - start), with: buffer[start..<end])
            end -= start
            start = 0
        }
        while true {
            try waitForInputBeforeDeadline()
            let count = buffer.withUnsafeMutableBytes { raw in
                recv(descriptor, raw.baseAddress.map { $0 + end }, raw.count - end, 0)
            }
            if count > 0 {
                end += count
                return true
            }
            if count == 0 { return false }
            if errno == EINTR { continue }
            throw ServerSocketError.system("recv", errno)
        }
    }

    /// Waits until a byte can be read or the deadline passes (then throws), so a peer trickling
    /// one byte at a time cannot stretch a request past it; without a deadline, returns at once.
    private func waitForInputBeforeDeadline() throws {
        guard let deadline else { return }
        while true {
            let now = DispatchTime.now()
            guard now < deadline.at else { throw ServerSocketError.deadlinePassed(deadline.part) }
            let milliseconds = (deadline.at.uptimeNanoseconds - now.uptimeNanoseconds) / 1_000_000
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, Int32(min(milliseconds + 1, 60_000)))
            if ready > 0 { return }
            if ready < 0, errno != EINTR { throw ServerSocketError.system("poll", errno) }
        }
    }

    /// One line without its CRLF, or `nil` at a clean end of stream before any byte of it.
    package func readLine(limit: Int) throws -> [UInt8]? {
        var line: [UInt8] = []
        while true {
            if let newline = buffer[start..<end].firstIndex(of: 0x0A) {
                line += buffer[start..<newline]
                start = newline + 1
                if line.last == 0x0D { line.removeLast() }
                return line
            }
            line += buffer[start..<end]
            start = end
            guard line.count <= limit else { throw ServerSocketError.malformed("a line longer than \(limit) bytes") }
            guard try fill() else {
                if line.isEmpty { return nil }
                throw ServerSocketError.closedEarly
            }
        }
    }

    /// Copies up to `destination.count` bytes; 0 only at end of stream.
    package func read(into destination: UnsafeMutableRawBufferPointer) throws -> Int {
        if start == end {
            guard try fill() else { return 0 }
        }
        let count = min(destination.count, end - start)
        buffer.withUnsafeBytes { raw in
            destination.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[start..<(start + count)]))
        }
        start += count
        return count
    }

    /// Writes every byte.
    package func write(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            #if canImport(Glibc)
            let flags = Int32(MSG_NOSIGNAL)
            #else
            let flags: Int32 = 0
            #endif
            let count = send(descriptor, bytes.baseAddress.map { $0 + offset }, bytes.count - offset, flags)
            if count < 0 {
                if errno == EINTR { continue }
                throw ServerSocketError.system("send", errno)
            }
            offset += count
        }
    }

    /// Waits until the peer closes its side (or resets), up to `timeout` seconds. Data the peer
    /// sends meanwhile is discarded.
    func waitForPeerClose(timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let remaining = max(1, Int32(deadline.timeIntervalSinceNow * 1000))
            let ready = poll(&entry, 1, min(remaining, 200))
            if ready < 0, errno != EINTR { return true }
            guard ready > 0 else { continue }
            if entry.revents & Int16(POLLHUP | POLLERR) != 0 { return true }
            var scratch = [UInt8](repeating: 0, count: 4096)
            let count = recv(descriptor, &scratch, scratch.count, Int32(MSG_DONTWAIT))
            if count == 0 { return true }
            if count < 0, errno != EAGAIN, errno != EWOULDBLOCK, errno != EINTR { return true }
        }
        return false
    }

    /// Ends the sending direction: the peer reads the end of the stream after what was written.
    func shutdownWrite() { _ = shutdown(descriptor, Int32(SHUT_WR)) }

    /// Stops both directions so a blocked reader or writer (on either end) wakes up.
    func shutdownBoth() { _ = shutdown(descriptor, Int32(SHUT_RDWR)) }
}
