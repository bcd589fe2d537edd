import Foundation
import Transport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small HTTP/1.1 server on 127.0.0.1 (the station emulator's, and the transport tests'): POSIX sockets, one thread per connection,
/// keep-alive, `Content-Length` and chunked request bodies, `Expect: 100-continue`.
///
/// The same handler can also be handed requests with no socket at all, in process
/// (`InProcessHTTPTransport`, the station emulator's `InProcessTransport`).
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

    /// What one connection may take from the server: a server in someone's test suite is still a
    /// network service, and a slow or hostile peer must not hold its threads forever.
    public struct Limits: Sendable, Hashable {
        /// How many connections are served at once. A connection past this is answered
        /// `503 Service Unavailable` and closed at once (counted in
        /// ``Statistics/connectionsRefused``).
        public var maximumConnections: Int
        /// The longest a request head may take, from its first byte to its empty line (seconds),
        /// or `nil` for none; past it the connection is closed.
        public var headDeadline: TimeInterval?
        /// The longest the handler's reads of one request body may take in all, from the end of
        /// the head (seconds), or `nil` for none; past it the read throws and the connection closes.
        public var bodyDeadline: TimeInterval?

        /// The defaults: 512 connections, 30 s for a head, 600 s for a body (a 100 MiB upload at
        /// under 200 KiB/s). With the 60 s limit on each read, a peer that trickles one byte at a
        /// time holds a connection for at most those.
        public init(maximumConnections: Int = 512, headDeadline: TimeInterval? = 30, bodyDeadline: TimeInterval? = 600) {
            self.maximumConnections = max(1, maximumConnections)
            self.headDeadline = headDeadline
            self.bodyDeadline = bodyDeadline
        }
    }

    /// What the server has seen, for assertions.
    public struct Statistics: Sendable {
        /// TCP connections accepted.
        public var connectionsAccepted = 0
        /// Connections refused with 503 because ``Limits/maximumConnections`` were open.
        public var connectionsRefused = 0
        /// Connections closed because a request head or body missed its deadline.
        public var deadlinesMissed = 0
        /// Requests whose head was read.
        public var requestsReceived = 0
        /// Connections that have ended (closed by either side).
        public var connectionsClosed = 0
    }

    /// The port the server listens on.
    public let port: UInt16
    /// The limits the server applies to each connection.
    public let limits: Limits
    private let listener: Int32
    private let handler: Handler
    private let state = Locked(State())
    private let acceptLoopDone = DispatchSemaphore(value: 0)

    private struct State {
        var stopped = false
        var listenerClosed = false
        var open: [Int32: ServerSocket] = [:]
        var statistics = Statistics()
        var simulatedCertificate: SimulatedCertificate?
    }

    /// Starts listening on 127.0.0.1, on `port` (0, the default, picks an ephemeral port), with
    /// `limits` on each connection.
    /// - Throws: `ServerSocketError.system` if the socket cannot be set up (for example when the
    ///   port is taken).
    public init(port requestedPort: UInt16 = 0, limits: Limits = Limits(), handler: @escaping Handler) throws {
        self.handler = handler
        self.limits = limits
        let descriptor = LoopbackSocket.make()
        guard descriptor >= 0 else { throw ServerSocketError.system("socket", errno) }
        // Rebinding a port that has connections in TIME_WAIT (a restarted or moved station) must work.
        var one: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard let bound = LoopbackSocket.listens(descriptor, onPort: requestedPort, backlog: 128) else {
            let code = errno
            close(descriptor)
            throw ServerSocketError.system("bind/listen", code)
        }
        listener = descriptor
        port = bound
        Self.listening.withLock { $0[port] = Listening(server: self) }
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

    /// The certificate this server presents to `https` requests delivered in process
    /// (``InProcessHTTPTransport/loopbackServers``, `https://127.0.0.1:<port>/…`); `nil`, the
    /// default, for none: such requests then fail with `.tlsFailure`. Over its socket the server
    /// speaks plain HTTP whatever this says.
    var simulatedCertificate: SimulatedCertificate? {
        get { state.withLock { $0.simulatedCertificate } }
        set { state.withLock { $0.simulatedCertificate = newValue } }
    }

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
        if first {
            Self.listening.withLock { if $0[port]?.server === self || $0[port]?.server == nil { $0[port] = nil } }
            _ = acceptLoopDone.wait(timeout: .now() + 5)
        }
    }

    // MARK: In process

    /// A server of this process, held weakly.
    private struct Listening: Sendable {
        weak var server: LoopbackHTTPServer?
    }

    /// The servers of this process that have not stopped, by port: where
    /// ``InProcessHTTPTransport/loopbackServers`` delivers a request for `127.0.0.1:<port>`.
    private static let listening = Locked<[UInt16: Listening]>([:])

    /// The running server listening on `port` in this process, or `nil`.
    static func running(onPort port: UInt16) -> LoopbackHTTPServer? {
        listening.withLock { $0[port]?.server }
    }

    /// This server's handler for one request delivered in process, counted in
    /// ``Statistics/requestsReceived`` as one read from a connection is; `nil` once stopped.
    func acceptInProcess() -> Handler? {
        state.withLock { state -> Handler? in
            guard !state.stopped else { return nil }
            state.statistics.requestsReceived += 1
            return handler
        }
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
            enum Admission { case serve, refuse, stop }
            let admission = state.withLock { state -> Admission in
                guard !state.stopped else { return .stop }
                guard state.open.count < limits.maximumConnections else {
                    state.statistics.connectionsRefused += 1
                    return .refuse
                }
                state.open[descriptor] = socket
                state.statistics.connectionsAccepted += 1
                return .serve
            }
            switch admission {
            case .stop:
                close(descriptor)
                return
            case .refuse:
                // Answered on the accept thread without reading: the answer fits the socket buffer.
                Self.refuse(socket)
                close(descriptor)
                continue
            case .serve:
                break
            }
            let thread = Thread { [self] in serve(socket) }
            thread.name = "LoopbackHTTPServer.connection"
            thread.start()
        }
    }

    /// The answer to a connection past ``Limits/maximumConnections``.
    private static func refuse(_ socket: ServerSocket) {
        let body = "too many connections\n"
        let text = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
            + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\nRetry-After: 1\r\n\r\n" + body
        try? Array(text.utf8).withUnsafeBytes { try socket.write($0) }
        socket.shutdownWrite()
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
            while let request = try Self.readRequest(socket, headDeadline: limits.headDeadline) {
                socket.setDeadline(limits.bodyDeadline, for: "body")
                state.withLock { $0.statistics.requestsReceived += 1 }
                if request.header("Expect")?.lowercased() == "100-continue" {
                    try Array("HTTP/1.1 100 Continue\r\n\r\n".utf8).withUnsafeBytes { try socket.write($0) }
                }
                let response = HTTPServerResponse(output: .socket(socket), isHeadRequest: request.method == "HEAD")
                do {
                    try handler(request, response)
                } catch {
                    if (error as? ServerSocketError)?.kind == .deadlinePassed { state.withLock { $0.statistics.deadlinesMissed += 1 } }
                    if !response.headSent {
                        try? response.send(status: 500, reason: "Handler Error", body: Array("\(error)".utf8))
                    }
                    return
                }
                if !response.headSent {
                    try response.send(status: 500, reason: "No Response", body: Array("the handler wrote nothing".utf8))
                }
                if response.closesConnection {
                    Self.lingeringClose(socket)
                    return
                }
                guard response.completeForReuse,
                      request.header("Connection")?.lowercased() != "close"
                else { return }
                // Drain what the handler left of the body so the next request starts cleanly.
                try request.consumeBody()
            }
        } catch let error as ServerSocketError where error.kind == .deadlinePassed {
            state.withLock { $0.statistics.deadlinesMissed += 1 }
            return
        } catch {
            return
        }
    }

    /// Ends a connection whose answer said `Connection: close` while the peer may still be sending
    /// a body: stops sending (the peer reads the whole answer), then reads and drops what arrives
    /// for a moment (at most 2 s and 16 MiB), so closing does not reset the connection before the
    /// peer has read the answer.
    private static func lingeringClose(_ socket: ServerSocket) {
        socket.shutdownWrite()
        socket.setDeadline(2, for: "body")
        var scratch = [UInt8](repeating: 0, count: 64 * 1024)
        var dropped = 0
        while dropped < 16 * 1024 * 1024 {
            guard let count = try? scratch.withUnsafeMutableBytes({ try socket.read(into: $0) }), count > 0 else { return }
            dropped += count
        }
    }

    /// Reads a request head; `nil` when the client closed the connection between requests. The
    /// head must be complete within `headDeadline` seconds of its first byte.
    package static func readRequest(_ socket: ServerSocket, headDeadline: TimeInterval?) throws -> HTTPServerRequest? {
        socket.setDeadline(nil, for: "head")
        // Waiting for the next request is bounded by the per-read idle limit; the deadline starts
        // with its first byte.
        guard try socket.bufferedCount > 0 || socket.fill() else { return nil }
        socket.setDeadline(headDeadline, for: "head")
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
                                     headBytes: headBytes, source: .socket(socket))
    }
}
