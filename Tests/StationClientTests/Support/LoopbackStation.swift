import Foundation
import Transport
import TransportTestSupport

/// Serves a `FakeStation` and its gateway over real loopback HTTP, so the client can be tested over
/// `CurlTransport`: exact streamed multipart bytes, `Content-Length`, `Range`, broken connections,
/// refused connections after a move.
final class LoopbackStation: Sendable {
    let station: FakeStation
    private let servers = Locked<(station: LoopbackHTTPServer?, gateway: LoopbackHTTPServer?)>((nil, nil))

    init(_ station: FakeStation) async throws {
        self.station = station
        let gateway = try LoopbackHTTPServer(handler: Self.handler(station, host: { FakeStation.gatewayHost }))
        servers.withLock { $0.gateway = gateway }
        try await start()
    }

    /// Serves the station on a fresh port (the old one, if any, stops answering) and makes the
    /// fake advertise the new URL through IPNS. Returns the URL.
    @discardableResult
    func start() async throws -> URL {
        let fake = station
        let hostBox = Locked("")
        let server = try LoopbackHTTPServer(handler: Self.handler(fake, host: { hostBox.withLock { $0 } }))
        let url = server.url("")
        let host = "127.0.0.1:\(server.port)"
        hostBox.withLock { $0 = host }
        let old = servers.withLock { servers -> LoopbackHTTPServer? in
            let old = servers.station
            servers.station = server
            return old
        }
        old?.stop()
        await fake.update { $0.host = host; $0.advertisedEndpoint = url }
        return url
    }

    var stationURL: URL { servers.withLock { $0.station?.url("") } ?? URL(fileURLWithPath: "/") }
    var gatewayURL: URL { servers.withLock { $0.gateway?.url("") } ?? URL(fileURLWithPath: "/") }

    func stop() {
        let both = servers.withLock { $0 }
        both.station?.stop()
        both.gateway?.stop()
    }

    private static func handler(_ fake: FakeStation, host: @escaping @Sendable () -> String) -> LoopbackHTTPServer.Handler {
        { request, response in
            let body = try request.readBody(limit: 200 << 20)
            guard let url = URL(string: "http://\(host())\(request.target)") else {
                try response.send(status: 400)
                return
            }
            var outgoing = HTTPRequest(method: HTTPMethod(request.method), url: url)
            for (name, value) in request.headers { outgoing.headers.add(name, value: value) }
            let result = Locked<Result<HTTPResponse, any Error>?>(nil)
            let forwarded = outgoing
            wait {
                let answer = await Result { try await fake.handle(forwarded, body: body) }
                result.withLock { $0 = answer }
            }
            guard let answer = result.withLock({ $0 }), case .success(let reply) = answer, reply.status > 0 else {
                // Refused, or "answer lost": the request was processed; break the connection.
                response.abortConnection()
                return
            }
            let bytes = [UInt8](reply.body.data ?? Data())
            var headers = reply.headers.map { ($0.name, $0.value) }.filter { $0.0.lowercased() != "content-length" }
            headers.append(("Content-Length", "\(bytes.count)"))
            if request.path.hasPrefix("/content/"), request.header("Range") == nil {
                let cut = Locked<Int?>(nil)
                wait { let value = await fake.takeStreamBreak(); cut.withLock { $0 = value } }
                if let cut = cut.withLock({ $0 }), cut < bytes.count {
                    try response.writeHead(status: reply.status, reason: "OK", headers: headers)
                    try response.write(Array(bytes[..<cut]))
                    response.abortConnection()
                    return
                }
            }
            try response.send(status: reply.status, reason: "Reply", headers: headers, body: bytes)
        }
    }

    /// Runs async work from a server thread (never from a task: that would block the task pool) and
    /// waits for it.
    static func wait(_ work: @escaping @Sendable () async -> Void) {
        let done = DispatchSemaphore(value: 0)
        Task {
            await work()
            done.signal()
        }
        done.wait()
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
