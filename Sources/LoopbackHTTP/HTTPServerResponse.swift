import Foundation

/// The response side of one exchange with `LoopbackHTTPServer`: write a head, then body bytes, or
/// misbehave on purpose (stall, close mid-body) to test a client.
public final class HTTPServerResponse {
    private let socket: ServerSocket
    private let isHeadRequest: Bool
    /// Whether a head has been written.
    public private(set) var headSent = false
    private var declaredLength: Int64?
    /// Body bytes written so far.
    public private(set) var bodyBytesWritten: Int64 = 0
    private(set) var aborted = false
    /// Whether the head said `Connection: close`: the server ends the connection after this answer.
    private(set) var closesConnection = false

    init(socket: ServerSocket, isHeadRequest: Bool) {
        self.socket = socket
        self.isHeadRequest = isHeadRequest
    }

    /// Writes the status line and header fields. Without a `Content-Length` field the body runs
    /// until the connection closes (`Connection: close` is added).
    public func writeHead(status: Int, reason: String = "Status", headers: [(String, String)] = []) throws {
        let head = try headBytes(status: status, reason: reason, headers: headers)
        try head.withUnsafeBytes { try socket.write($0) }
        headSent = true
    }

    /// The head's bytes; records the declared length.
    private func headBytes(status: Int, reason: String, headers: [(String, String)]) throws -> [UInt8] {
        guard !headSent else { throw ServerSocketError.malformed("the handler wrote a second head") }
        var fields = headers
        declaredLength = headers.first { $0.0.lowercased() == "content-length" }.flatMap { Int64($0.1) }
        let bodiless = isHeadRequest || status == 204 || status == 304 || (100..<200).contains(status)
        if declaredLength == nil, !bodiless { fields.append(("Connection", "close")) }
        if bodiless { declaredLength = 0 }
        if headers.contains(where: { $0.0.lowercased() == "connection" && $0.1.lowercased() == "close" }) { closesConnection = true }
        var text = "HTTP/1.1 \(status) \(reason)\r\n"
        for (name, value) in fields { text += "\(name): \(value)\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }

    /// Writes an informational (1xx) response block, such as `103 Early Hints`, before the real head.
    public func writeInformational(status: Int, reason: String = "Info", headers: [(String, String)] = []) throws {
        guard !headSent, (100..<200).contains(status) else {
            throw ServerSocketError.malformed("an informational block needs a 1xx status before the head")
        }
        var text = "HTTP/1.1 \(status) \(reason)\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        text += "\r\n"
        try Array(text.utf8).withUnsafeBytes { try socket.write($0) }
    }

    /// Writes raw bytes to the connection, bypassing HTTP framing (for malformed replies).
    public func writeRaw(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try socket.write($0) }
        headSent = true
        aborted = true  // framing unknown: never reuse this connection
    }

    /// Writes body bytes.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        try socket.write(bytes)
        bodyBytesWritten += Int64(bytes.count)
    }

    /// Writes body bytes.
    public func write(_ bytes: [UInt8]) throws { try bytes.withUnsafeBytes { try write($0) } }

    /// Writes a complete response with a `Content-Length`.
    public func send(status: Int, reason: String = "Status", headers: [(String, String)] = [], body: [UInt8] = []) throws {
        try writeHead(status: status, reason: reason, headers: headers + [("Content-Length", "\(body.count)")], body: body)
    }

    /// Writes the head and then `body` in one write, so they leave as one segment (a client wakes
    /// once per answer). The body is not written for a HEAD request.
    public func writeHead(status: Int, reason: String = "Status", headers: [(String, String)], body: [UInt8]) throws {
        var bytes = try headBytes(status: status, reason: reason, headers: headers)
        if !isHeadRequest { bytes += body }
        try bytes.withUnsafeBytes { try socket.write($0) }
        headSent = true
        if !isHeadRequest { bodyBytesWritten += Int64(body.count) }
    }

    /// Closes the connection at once, mid-body if the body is unfinished.
    public func abortConnection() {
        aborted = true
        socket.shutdownBoth()
    }

    /// Blocks until the client closes the connection (for example after a timeout or a
    /// cancellation) or `timeout` seconds pass; `true` if the client closed it.
    public func waitForClientToClose(timeout: TimeInterval) -> Bool {
        aborted = true  // whatever happens next, this connection is not reused
        return socket.waitForPeerClose(timeout: timeout)
    }

    /// Whether the response ended cleanly with its declared length, so the connection can be reused.
    var completeForReuse: Bool {
        guard headSent, !aborted, let declaredLength else { return false }
        return isHeadRequest || bodyBytesWritten == declaredLength
    }
}
