import Foundation
import LoopbackHTTP
import Transport

/// A server on loopback that takes an upload to `/upload` and, the first time, closes the
/// connection without a byte of answer, as a server does that closed a pooled connection
/// meanwhile (uvicorn after 5 s idle): a client reusing a connection from an earlier request
/// (`/warm`) sends the request again on a new one and must send the body again from its first
/// byte. Later uploads get 200 with the byte count. Each upload is recorded with its length and
/// whether its bytes were `pattern`'s from offset 0.
///
/// (A server that cuts the body itself gives the client a send error, which libcurl does not retry.)
public final class FirstUploadDroppingServer: Sendable {
    private let received = Locked<[(bytes: Int64, intact: Bool)]>([])
    private let server: LoopbackHTTPServer

    /// Starts the server, checking uploads against `pattern`.
    ///
    /// - Throws: when no port can be listened on.
    public init(pattern: PatternBytes) throws {
        let uploads = received
        server = try LoopbackHTTPServer { request, response in
            guard request.path == "/upload" else {
                try response.send(status: 200, body: Array("warm".utf8))
                return
            }
            let first = uploads.withLock { $0.isEmpty }
            var intact = true
            var received: Int64 = 0
            try request.consumeBody { bytes, offset in
                if !pattern.matches(bytes, offset: offset) { intact = false }
                received += Int64(bytes.count)
            }
            uploads.withLock { $0.append((received, intact)) }
            if first {
                response.abortConnection()
                return
            }
            try response.send(status: 200, body: Array("\(received)".utf8))
        }
    }

    /// The uploads received so far, in order.
    public var uploads: [(bytes: Int64, intact: Bool)] { received.value }

    /// The URL of `path` on this server.
    public func url(_ path: String) -> URL { server.url(path) }

    /// Stops the server.
    public func stop() { server.stop() }
}
