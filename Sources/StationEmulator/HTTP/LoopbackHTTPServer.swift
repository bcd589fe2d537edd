import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small HTTP/1.1 server on 127.0.0.1 (the station emulator's, and the transport tests'): POSIX sockets, one thread per connection,
/// keep-alive, `Content-Length` and chunked request bodies, `Expect: 100-continue`.
///
/// The handler runs on the connection's thread and may block (read a body slowly, stall, wait for
/// the client to give up), which is what transport tests need. Bodies are read and written in
/// pieces, so the server itself stays in constant memory for any body size.
///
///     let server = try LoopbackHTTPServer { request, response in
///         try response.send(status: 200, body: Array("hello".utf8))
///     }
///     defer { server.stop() }
///     let url = server.url("/hello")
public final class LoopbackHTTPServer: Sendable {
    /// Handles one request. Write a response through `response`; a handler that throws before
    /// writing a head gets a 500, one that throws after has its connection closed.
    public typealias Handler = @Sendable (HTTPServerRequest, HTTPServerResponse) throws -> Void

    /// What the server has seen, for assertions.
    public struct Statistics: Sendable {
        /// TCP connections accepted.
        public var connectionsAccepted = 0
        /// Requests whose head was read.
        public var requestsReceived = 0
        /// Connections that have ended (closed by either side).
        public var connectionsClosed = 0
    }

    /// The port the server listens on.
    public let port: UInt16
    private let listener: Int32
    private let handler: Handler
    private let state = Locked(State())
    private let acceptLoopDone = DispatchSemaphore(value: 0)

    private struct State {
        var stopped = false
        var listenerClosed = false
        var open: [Int32: ServerSocket] = [:]
        var statistics = Statistics()
    }

    /// Starts listening on 127.0.0.1, on `port` (0, the default, picks an ephemeral port).
    /// - Throws: `ServerSocketError.system` if the socket cannot be set up (for example when the
    ///   port is taken).
    public init(port requestedPort: UInt16 = 0, handler: @escaping Handler) throws {
        self.handler = handler
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw ServerSocketError.system("socket", errno) }
        // Rebinding a port that has connections in TIME_WAIT (a restarted or moved station) must work.
        var one: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = requestedPort.bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(descriptor, generic, length) == 0 && listen(descriptor, 128) == 0
                    && getsockname(descriptor, generic, &length) == 0
            }
        }
        guard bound else {
            let code = errno
            close(descriptor)
            throw ServerSocketError.system("bind/listen", code)
        }
        listener = descriptor
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "LoopbackHTTPServer.accept"
        thread.start()
    }

    deinit { stop() }

    /// `http://127.0.0.1:<port><path>`.
    public func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)") ?? URL(fileURLWithPath: "/")
    }

    /// A snapshot of the counters.
    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// Stops accepting and closes every open connection. Safe to call more than once.
    ///
    /// Descriptors are shut down and closed only under the state lock, so a descriptor number that
    /// was closed and reused elsewhere in the process (another server, another test) is never touched.
    public func stop() {
        let first = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.stopped = true
            if !state.listenerClosed { _ = shutdown(listener, Int32(SHUT_RDWR)) }
            for socket in state.open.values { socket.shutdownBoth() }
            return true
        }
        if first { _ = acceptLoopDone.wait(timeout: .now() + 5) }
    }

    // MARK: Threads

    private func acceptLoop() {
        defer {
            state.withLock { state in
                close(listener)
                state.listenerClosed = true
            }
            acceptLoopDone.signal()
        }
        while true {
            let descriptor = accept(listener, nil, nil)
            if descriptor < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            let socket = ServerSocket(descriptor: descriptor)
            let accepted = state.withLock { state -> Bool in
                guard !state.stopped else { return false }
                state.open[descriptor] = socket
                state.statistics.connectionsAccepted += 1
                return true
            }
            guard accepted else {
                close(descriptor)
                return
            }
            let thread = Thread { [self] in serve(socket) }
            thread.name = "LoopbackHTTPServer.connection"
            thread.start()
        }
    }

    private func serve(_ socket: ServerSocket) {
        defer {
            state.withLock { state in
                state.open[socket.descriptor] = nil
                state.statistics.connectionsClosed += 1
                close(socket.descriptor)
            }
        }
        do {
            while let request = try readRequest(socket) {
                state.withLock { $0.statistics.requestsReceived += 1 }
                if request.header("Expect")?.lowercased() == "100-continue" {
                    try Array("HTTP/1.1 100 Continue\r\n\r\n".utf8).withUnsafeBytes { try socket.write($0) }
                }
                let response = HTTPServerResponse(socket: socket, isHeadRequest: request.method == "HEAD")
                do {
                    try handler(request, response)
                } catch {
                    if !response.headSent {
                        try? response.send(status: 500, reason: "Handler Error", body: Array("\(error)".utf8))
                    }
                    return
                }
                if !response.headSent {
                    try response.send(status: 500, reason: "No Response", body: Array("the handler wrote nothing".utf8))
                }
                guard response.completeForReuse,
                      request.header("Connection")?.lowercased() != "close"
                else { return }
                // Drain what the handler left of the body so the next request starts cleanly.
                try request.consumeBody()
            }
        } catch {
            return
        }
    }

    /// Reads a request head; `nil` when the client closed the connection between requests.
    private func readRequest(_ socket: ServerSocket) throws -> HTTPServerRequest? {
        let lineLimit = 1024 * 1024
        guard let requestLine = try socket.readLine(limit: lineLimit) else { return nil }
        var headBytes = requestLine.count + 2
        let parts = String(decoding: requestLine, as: UTF8.self).split(separator: " ")
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else {
            throw ServerSocketError.malformed("request line")
        }
        var headers: [(name: String, value: String)] = []
        while true {
            guard let line = try socket.readLine(limit: lineLimit) else { throw ServerSocketError.closedEarly }
            headBytes += line.count + 2
            guard headBytes <= 4 * lineLimit else { throw ServerSocketError.malformed("head too large") }
            if line.isEmpty { break }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { throw ServerSocketError.malformed("header line") }
            let name = String(decoding: line[..<colon], as: UTF8.self)
            let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingCharacters(in: .whitespaces)
            headers.append((name, value))
        }
        return try HTTPServerRequest(method: String(parts[0]), target: String(parts[1]), headers: headers,
                                     headBytes: headBytes, socket: socket)
    }
}
