import Foundation

/// Serves a request handler (the station's or the gateway's) over a ``LoopbackHTTPServer``:
/// stamps the receipt time before the body is read, answers 413 from the declared length alone,
/// writes `Date` (from the emulator's clock) on every response, and applies connection faults.
struct StationHTTPServer: Sendable {
    let server: LoopbackHTTPServer

    /// - Throws: ``StationEmulatorError/cannotListen(_:)`` when the port cannot be bound.
    init(port: UInt16, clock: any StationClock, tooLarge: (@Sendable (StationRequest) -> StationResponse?)?,
         handle: @escaping @Sendable (StationRequest) async -> StationResponse) throws {
        do {
            server = try LoopbackHTTPServer(port: port) { request, response in
                let head = StationRequest(method: request.method, target: request.target, headers: request.headers,
                                          receivedAt: clock.now())
                if let refusal = tooLarge?(head) {
                    try Self.write(refusal, to: response, clock: clock, isHead: head.method == "HEAD")
                    return
                }
                // The station buffers whole bodies in memory too; this bound only stops a runaway chunked upload.
                let full = StationRequest(method: head.method, target: head.target, headers: head.headers,
                                          body: Data(try request.readBody(limit: 1 << 31)), receivedAt: head.receivedAt)
                let answer = Self.wait { await handle(full) }
                try Self.write(answer, to: response, clock: clock, isHead: head.method == "HEAD")
            }
        } catch {
            throw StationEmulatorError.cannotListen("127.0.0.1:\(port): \(error)")
        }
    }

    var port: UInt16 { server.port }

    func stop() { server.stop() }

    /// Runs async work on the connection thread (see ``ConnectionExecutor``).
    private static func wait(_ work: @escaping @Sendable () async -> StationResponse) -> StationResponse {
        ConnectionExecutor().run(work)
    }

    private static func write(_ answer: StationResponse, to response: HTTPServerResponse, clock: any StationClock,
                              isHead: Bool) throws {
        var headers: [(String, String)] = [
            ("date", CivilTime(epochSeconds: Int64(clock.now().rounded(.down))).httpDate), ("server", "uvicorn"),
        ]
        if answer.header("content-length") == nil, !answer.endlessBody {
            headers.append(("content-length", String(answer.body.count)))
        }
        headers += answer.headers.map { ($0.name, $0.value) }
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
        guard answer.closeMidBody, !isHead else {
            // A HEAD answer has the GET answer's head and no body (the response leaves it out).
            try response.writeHead(status: answer.status, reason: reasonPhrase(answer.status), headers: headers, body: bytes)
            return
        }
        try response.writeHead(status: answer.status, reason: reasonPhrase(answer.status), headers: headers)
        try response.write([UInt8](answer.bodyBeforeClose))
        response.abortConnection()
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
