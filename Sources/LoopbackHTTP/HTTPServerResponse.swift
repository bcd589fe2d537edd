import Foundation

/// The response side of one exchange with `LoopbackHTTPServer`: write a head, then body bytes, or
/// misbehave on purpose (stall, close mid-body) to test a client.
public final class HTTPServerResponse {
    private let output: Output
    private let isHeadRequest: Bool
    /// Whether a head has been written.
    public private(set) var headSent = false
    private var declaredLength: Int64?
    /// Body bytes written so far.
    public private(set) var bodyBytesWritten: Int64 = 0
    private(set) var aborted = false
    /// Whether the head said `Connection: close`: the server ends the connection after this answer.
    private(set) var closesConnection = false

    /// Where the answer goes: the connection, as HTTP/1.1 bytes, or an in-process exchange, as a
    /// head and body bytes.
    enum Output {
        case socket(ServerSocket)
        case inProcess(InProcessExchange)
    }

    init(output: Output, isHeadRequest: Bool) {
        self.output = output
        self.isHeadRequest = isHeadRequest
    }

    /// Whether the body has reached its declared length (or, without one, whether a head was
    /// written): the answer is whole if the exchange ends now.
    var bodyComplete: Bool {
        guard headSent, !aborted else { return false }
        guard let declaredLength else { return true }
        return isHeadRequest || bodyBytesWritten == declaredLength
    }

    /// Writes the status line and header fields. Without a `Content-Length` field the body runs
    /// until the connection closes (`Connection: close` is added).
    public func writeHead(status: Int, reason: String = "Status", headers: [(String, String)] = []) throws {
        try writeHead(status: status, reason: reason, headers: headers, body: [])
    }

    /// The head's bytes (none in process, where the exchange takes the head itself); records the
    /// declared length.
    private func headBytes(status: Int, reason: String, headers: [(String, String)]) throws -> [UInt8] {
        guard !headSent else { throw ServerSocketError.malformed("the handler wrote a second head") }
        var fields = headers
        declaredLength = headers.first { $0.0.lowercased() == "content-length" }.flatMap { Int64($0.1) }
        let bodiless = isHeadRequest || status == 204 || status == 304 || (100..<200).contains(status)
        if declaredLength == nil, !bodiless { fields.append(("Connection", "close")) }
        if bodiless { declaredLength = 0 }
        if headers.contains(where: { $0.0.lowercased() == "connection" && $0.1.lowercased() == "close" }) { closesConnection = true }
        if case .inProcess(let exchange) = output {
            let head = InProcessExchange.Head(status: status, fields: fields, length: declaredLength)
            try exchange.deliverHead(head)
            return []
        }
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
        // In process an informational block is not the response, and nobody else would see it.
        guard case .socket(let socket) = output else { return }
        var text = "HTTP/1.1 \(status) \(reason)\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        text += "\r\n"
        try Array(text.utf8).withUnsafeBytes { try socket.write($0) }
    }

    /// Writes raw bytes to the connection, bypassing HTTP framing (for malformed replies).
    public func writeRaw(_ bytes: [UInt8]) throws {
        switch output {
        case .socket(let socket): try bytes.withUnsafeBytes { try socket.write($0) }
        case .inProcess(let exchange):
            // In process the bytes are no head the exchange could read: the client's parse fails.
            exchange.fail(exchange.error(.protocolError, "the server's reply is not an HTTP response"))
        }
        headSent = true
        aborted = true  // framing unknown: never reuse this connection
    }

    /// Writes body bytes.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        switch output {
        case .socket(let socket): try socket.write(bytes)
        case .inProcess(let exchange): try exchange.writeBody(bytes, declaredLength: isHeadRequest ? 0 : declaredLength)
        }
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
        headSent = true
        switch output {
        case .socket(let socket):
            if !isHeadRequest { bytes += body }
            try bytes.withUnsafeBytes { try socket.write($0) }
            if !isHeadRequest { bodyBytesWritten += Int64(body.count) }
        case .inProcess:
            if !isHeadRequest { try write(body) }
        }
    }

    /// Closes the connection at once, mid-body if the body is unfinished.
    public func abortConnection() {
        let complete = bodyComplete
        aborted = true
        switch output {
        case .socket(let socket): socket.shutdownBoth()
        case .inProcess(let exchange) where complete:
            // After a whole body (or one that ends with the connection) closing loses nothing.
            exchange.endBody()
        case .inProcess(let exchange):
            exchange.fail(exchange.error(.connectionLost, "the server closed the connection"
                                             + (headSent ? " mid-body" : " without a response")))
        }
    }

    /// Blocks until the client closes the connection (for example after a timeout or a
    /// cancellation) or `timeout` seconds pass; `true` if the client closed it.
    public func waitForClientToClose(timeout: TimeInterval) -> Bool {
        aborted = true  // whatever happens next, this connection is not reused
        switch output {
        case .socket(let socket): return socket.waitForPeerClose(timeout: timeout)
        case .inProcess(let exchange): return exchange.waitForClientToClose(timeout: timeout)
        }
    }

    /// Whether the response ended cleanly with its declared length, so the connection can be reused.
    var completeForReuse: Bool {
        guard headSent, !aborted, let declaredLength else { return false }
        return isHeadRequest || bodyBytesWritten == declaredLength
    }
}
