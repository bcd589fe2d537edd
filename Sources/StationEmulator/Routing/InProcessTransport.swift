import Foundation
import LoopbackHTTP
import Transport

/// An `HTTPTransport` that hands requests straight to an emulator's router, with no sockets:
/// the fastest way to run a client against the emulator in unit tests.
///
/// Paths under `/ipfs/` and `/ipns/` go to the emulated gateway, everything else to the station,
/// whatever the URL's host and port (sent as `Host`, as an HTTP client would). Responses carry
/// `Date` like the HTTP server's; progress is reported once the body is handed over and once
/// the answer is in. A mid-body fault throws `TransportError` with kind `.connectionLost`: a
/// streamed response first yields the bytes sent before the cut.
public struct InProcessTransport: HTTPTransport {
    /// Which of an emulator's two servers a transport reaches.
    enum Role: Sendable {
        /// The station, and the gateway for `/ipfs/…` and `/ipns/…` (one host for both).
        case stationAndGateway
        /// The gateway alone (station paths answer the gateway's 404).
        case gateway
    }

    let emulator: StationEmulator
    let role: Role

    /// A transport into `emulator`.
    public init(emulator: StationEmulator) {
        self.emulator = emulator
        role = .stationAndGateway
    }

    init(emulator: StationEmulator, role: Role) {
        self.emulator = emulator
        self.role = role
    }

    /// Runs `request` through the emulator.
    ///
    /// - Throws: `TransportError`: `.cancelled` when the task is cancelled, `.requestBodyFailed`
    ///   when the body cannot be read, `.connectionLost` for an injected mid-body fault,
    ///   `.responseTooLarge` / `.responseBodyFailed` when the response cannot be delivered as
    ///   `options.response` asks.
    public func send(_ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions) async throws -> HTTPResponse {
        let receivedAt = emulator.clock.now()
        let bytes = try await body.collect(upTo: Int(Int32.max), for: request)
        if Task.isCancelled {
            throw TransportError(.cancelled, method: request.method, url: request.url, message: "cancelled")
        }
        options.progress?(TransferProgress(bytesSent: Int64(bytes.count), expectedBytesToSend: Int64(bytes.count),
                                           bytesReceived: 0, expectedBytesToReceive: nil))
        var headers = request.headers.map { (name: $0.name, value: $0.value) }
        if !request.headers.contains("host"), let host = request.url.host {
            headers.insert((name: "host", value: request.url.port.map { "\(host):\($0)" } ?? host), at: 0)
        }
        if !request.headers.contains("content-length"), !request.headers.contains("transfer-encoding"),
           !bytes.isEmpty || request.method == .post {
            headers.append((name: "content-length", value: String(bytes.count)))
        }
        let components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)
        var target = components?.percentEncodedPath ?? "/"
        if target.isEmpty { target = "/" }
        if let query = components?.percentEncodedQuery { target += "?" + query }
        let routed = StationRequest(method: request.method.rawValue, target: target, headers: headers, body: bytes,
                                    receivedAt: receivedAt)
        let answer = switch role {
        case .stationAndGateway: await emulator.handle(routed)
        case .gateway: await emulator.handleGateway(routed)
        }
        if answer.endlessBody { return try Self.endless(answer, request: request, options: options) }
        var responseHeaders = HTTPHeaders([("date", CivilTime(epochSeconds: Int64(emulator.clock.now().rounded(.down))).httpDate),
                                           ("server", "uvicorn"), ("content-length", String(answer.body.count))])
        for (name, value) in answer.headers where name.lowercased() != "content-length" { responseHeaders.add(name, value: value) }
        let lost = TransportError(.connectionLost, method: request.method, url: request.url,
                                  message: "the emulator closed the connection mid-body (injected fault)")
        let cut = answer.bodyBeforeClose
        if answer.closeMidBody, cut.count < answer.body.count {
            guard case .stream = options.response else { throw lost }
            // The bytes before the cut arrive, then the connection breaks, as over a socket.
            let delivered = Locked(false)
            let stream = HTTPBodyStream(length: Int64(answer.body.count)) {
                if delivered.withLock({ let was = $0; $0 = true; return was }) || cut.isEmpty { throw lost }
                return cut
            }
            return HTTPResponse(status: answer.status, headers: responseHeaders, body: .stream(stream))
        }
        options.progress?(TransferProgress(bytesSent: Int64(bytes.count), expectedBytesToSend: Int64(bytes.count),
                                           bytesReceived: Int64(answer.body.count),
                                           expectedBytesToReceive: Int64(answer.body.count)))
        return HTTPResponse(status: answer.status, headers: responseHeaders,
                            body: try options.response.deliver(answer.body, for: request))
    }

    /// An answer whose body never ends (``RequestFault/endlessBody``), delivered as a socket
    /// transport would: streamed forever, refused past a memory limit, or written to a file until
    /// the total time limit (at most 1 GiB, then `.responseBodyFailed`) or cancellation.
    private static func endless(_ answer: StationResponse, request: HTTPRequest, options: TransferOptions) throws -> HTTPResponse {
        var headers = HTTPHeaders([("server", "uvicorn"), ("connection", "close")])
        for (name, value) in answer.headers where name.lowercased() != "content-length" { headers.add(name, value: value) }
        let pattern = PatternBytes(seed: 14)
        let chunk = 65_536
        switch options.response {
        case .stream:
            let offset = Locked<Int64>(0)
            let stream = HTTPBodyStream(length: nil) {
                if Task.isCancelled {
                    throw TransportError(.cancelled, method: request.method, url: request.url, message: "cancelled")
                }
                let start = offset.withLock { value -> Int64 in
                    let start = value
                    value += Int64(chunk)
                    return start
                }
                return pattern.data(offset: start, count: chunk)
            }
            return HTTPResponse(status: answer.status, headers: headers, body: .stream(stream))
        case let .memory(limit):
            throw TransportError(.responseTooLarge(limit: limit), method: request.method, url: request.url,
                                 message: "the response body exceeds \(limit) bytes")
        case let .file(url):
            let started = Date()
            let total = options.timeouts?.total
            guard FileManager.default.createFile(atPath: url.path, contents: nil, attributes: [.posixPermissions: 0o600]),
                  let handle = FileHandle(forWritingAtPath: url.path) else {
                throw TransportError(.responseBodyFailed, method: request.method, url: request.url, message: "cannot write \(url.path)")
            }
            defer { try? handle.close() }
            var written: Int64 = 0
            while true {
                if Task.isCancelled {
                    throw TransportError(.cancelled, method: request.method, url: request.url, message: "cancelled")
                }
                if let total, Date().timeIntervalSince(started) > total {
                    throw TransportError(.timedOut, method: request.method, url: request.url,
                                         message: "the transfer took longer than \(total) s")
                }
                guard written < 1 << 30 else {
                    throw TransportError(.responseBodyFailed, method: request.method, url: request.url,
                                         message: "the endless body passed 1 GiB on disk")
                }
                do { try handle.write(contentsOf: pattern.data(offset: written, count: chunk)) } catch {
                    throw TransportError(.responseBodyFailed, method: request.method, url: request.url,
                                         message: "cannot write \(url.path)", underlying: error)
                }
                written += Int64(chunk)
                options.progress?(TransferProgress(bytesSent: 0, expectedBytesToSend: nil, bytesReceived: written,
                                                   expectedBytesToReceive: nil))
            }
        }
    }
}
