import Foundation
import LoopbackHTTP
import Transport

/// Serves a request handler (the station's or the gateway's) over a ``LoopbackHTTPServer``:
/// stamps the receipt time before the body is read, answers 413 from the declared length alone,
/// writes `Date` (from the emulator's clock) on every response, and applies connection faults.
struct StationHTTPServer: Sendable {
    let server: LoopbackHTTPServer

    /// Serves `handler` (see ``handler(clock:maximumBodySize:tooLarge:refusesDeclaredLength:handle:)``)
    /// on `127.0.0.1:port` with `limits` on each connection.
    /// - Throws: ``StationEmulatorError/cannotListen(_:)`` when the port cannot be bound.
    init(port: UInt16, limits: LoopbackHTTPServer.Limits, handler: @escaping LoopbackHTTPServer.Handler) throws {
        do {
            server = try LoopbackHTTPServer(port: port, limits: limits, handler: handler)
        } catch {
            throw StationEmulatorError.cannotListen("127.0.0.1:\(port): \(error)")
        }
    }

    /// The request handler of the station or the gateway, served over a socket or handed requests
    /// in process (``InProcessTransport``).
    ///
    /// - Parameters:
    ///   - maximumBodySize: `MAX_UPLOAD_SIZE`: no body longer than this is read into memory.
    ///   - tooLarge: the 413 answer for a request whose body is over `maximumBodySize` (it records
    ///     the refusal), given the head alone.
    ///   - refusesDeclaredLength: whether a declared `Content-Length` over the limit on this path is
    ///     refused before any body byte is read (the station's middleware, on its body-hashed paths).
    static func handler(clock: any StationClock, maximumBodySize: Int,
                        tooLarge: @escaping @Sendable (StationRequest) -> StationResponse,
                        refusesDeclaredLength: @escaping @Sendable (StationRequest) -> Bool,
                        handle: @escaping @Sendable (StationRequest) async -> StationResponse) -> LoopbackHTTPServer.Handler {
        { request, response in
            let head = StationRequest(method: request.method, target: request.target, headers: request.headers,
                                      receivedAt: clock.now())
            let isHead = head.method == "HEAD"
            // A declared length over the limit: refused from the head alone. The station does
            // this on its body-hashed paths; elsewhere it would buffer the body, which the
            // emulator never does.
            if refusesDeclaredLength(head) || Self.declaredLength(head).map({ $0 > Int64(maximumBodySize) }) ?? false {
                try Self.write(tooLarge(head), to: response, clock: clock, isHead: isHead, closing: !request.bodyFinished)
                return
            }
            // A chunked body is read only up to the limit; past it, 413 and the connection closes.
            guard let body = try Self.readBody(request, limit: maximumBodySize) else {
                try Self.write(tooLarge(head), to: response, clock: clock, isHead: isHead, closing: true)
                return
            }
            let full = StationRequest(method: head.method, target: head.target, headers: head.headers,
                                      body: Data(body), receivedAt: head.receivedAt)
            let answer = Self.wait { await handle(full) }
            try Self.write(answer, to: response, clock: clock, isHead: isHead)
        }
    }

    /// The declared `Content-Length`, when it is a digit string (a longer one than `Int64` holds is `Int64.max`).
    static func declaredLength(_ head: StationRequest) -> Int64? {
        guard let text = head.header("content-length"), !text.isEmpty,
              text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int64(text) ?? Int64.max
    }

    /// The whole body, or `nil` once it passes `limit` bytes (what was read is dropped; the rest
    /// is not read).
    static func readBody(_ request: HTTPServerRequest, limit: Int) throws -> [UInt8]? {
        var body: [UInt8] = []
        var scratch = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let room = min(scratch.count, limit - body.count + 1)
            let count = try scratch.withUnsafeMutableBytes { try request.readBody(into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<room])) }
            if count == 0 { return body }
            guard body.count + count <= limit else { return nil }
            body += scratch[0..<count]
        }
    }

    var port: UInt16 { server.port }

    func stop() { server.stop() }

    /// Runs async work on the connection thread (see ``ConnectionExecutor``). Before task
    /// executors (macOS 15 / iOS 18) the work runs on the shared pool while this thread waits, which
    /// is enough unless the client itself blocks pool threads.
    private static func wait(_ work: @escaping @Sendable () async -> StationResponse) -> StationResponse {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
            return ConnectionExecutor().run(work)
        }
        let done = DispatchSemaphore(value: 0)
        let box = Locked<StationResponse?>(nil)
        Task {
            let value = await work()
            box.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return box.value ?? .detail(500, "the handler finished without an answer")
    }

    private static func write(_ answer: StationResponse, to response: HTTPServerResponse, clock: any StationClock,
                              isHead: Bool, closing: Bool = false) throws {
        var headers: [(String, String)] = [
            ("date", CivilTime(epochSeconds: Int64(clock.now().rounded(.down))).httpDate), ("server", "uvicorn"),
        ]
        if answer.header("content-length") == nil, !answer.endlessBody {
            headers.append(("content-length", String(answer.body.count)))
        }
        headers += answer.headers.map { ($0.name, $0.value) }
        // An unread body is not drained: the connection ends after this answer.
        if closing { headers.append(("connection", "close")) }
        if answer.endlessBody, !isHead {
            // No length: the body runs until the connection closes, and it never closes from here.
            try response.writeHead(status: answer.status, reason: reasonPhrase(answer.status), headers: headers)
            let pattern = PatternBytes(seed: 14)
            var offset: Int64 = 0
            while true {  // ends when the client leaves (the write throws)
                try response.write(pattern.bytes(offset: offset, count: 65_536))
                offset += 65_536
            }
        }
        let bytes = [UInt8](answer.body)
        if let rate = answer.bytesPerSecond, !isHead {
            try response.writeHead(status: answer.status, reason: reasonPhrase(answer.status), headers: headers)
            try writeThrottled(answer.closeMidBody ? [UInt8](answer.bodyBeforeClose) : bytes, to: response, bytesPerSecond: rate)
            if answer.closeMidBody { response.abortConnection() }
            return
        }
        guard answer.closeMidBody, !isHead else {
            // A HEAD answer has the GET answer's head and no body (the response leaves it out).
            try response.writeHead(status: answer.status, reason: reasonPhrase(answer.status), headers: headers, body: bytes)
            return
        }
        try response.writeHead(status: answer.status, reason: reasonPhrase(answer.status), headers: headers)
        try response.write([UInt8](answer.bodyBeforeClose))
        response.abortConnection()
    }

    /// Writes `bytes` at about `bytesPerSecond`: slices of a twentieth of a second's bytes, each
    /// followed by its time at that rate (the connection's thread waits; a client that leaves
    /// ends it at the next write).
    private static func writeThrottled(_ bytes: [UInt8], to response: HTTPServerResponse, bytesPerSecond: Int) throws {
        let rate = max(1, bytesPerSecond)
        let slice = max(1, rate / 20)
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + slice)
            try bytes.withUnsafeBytes { try response.write(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
            Thread.sleep(forTimeInterval: Double(end - start) / Double(rate))
            start = end
        }
    }

    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 206: "Partial Content"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 412: "Precondition Failed"
        case 413: "Request Entity Too Large"
        case 416: "Requested Range Not Satisfiable"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        default: "Status"
        }
    }
}
