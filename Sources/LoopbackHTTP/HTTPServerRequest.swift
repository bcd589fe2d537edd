import Foundation

/// A request received by `LoopbackHTTPServer` (or handed to its handler in process): its head, and
/// its body read on demand (so a handler can consume a 100 MiB upload in constant memory).
public final class HTTPServerRequest {
    /// The method token, for example `POST`.
    public let method: String
    /// The request target as sent, for example `/path?x=1`.
    public let target: String
    /// The header fields in order, names as sent.
    public let headers: [(name: String, value: String)]
    /// The total size of the request head in bytes (request line and header lines).
    public let headBytes: Int

    private let source: Source
    private var framing: Framing
    /// Body bytes read so far.
    public private(set) var bodyBytesRead: Int64 = 0

    /// Where the body comes from: the connection (framed as the head says), or an in-process
    /// exchange's pipe (the bytes themselves; the framing only says how a client would send them).
    enum Source {
        case socket(ServerSocket)
        case inProcess(InProcessExchange)
    }

    private enum Framing {
        case length(remaining: Int64)
        case chunked(remainingInChunk: Int64, finished: Bool)
    }

    init(method: String, target: String, headers: [(name: String, value: String)], headBytes: Int, source: Source) throws {
        self.method = method
        self.target = target
        self.headers = headers
        self.headBytes = headBytes
        self.source = source
        let encoding = headers.first { $0.name.lowercased() == "transfer-encoding" }?.value.lowercased()
        if let encoding {
            guard encoding == "chunked" else { throw ServerSocketError.malformed("transfer-encoding \(encoding)") }
            framing = .chunked(remainingInChunk: 0, finished: false)
        } else if let length = headers.first(where: { $0.name.lowercased() == "content-length" })?.value {
            guard let value = Int64(length), value >= 0 else { throw ServerSocketError.malformed("content-length") }
            framing = .length(remaining: value)
        } else {
            framing = .length(remaining: 0)
        }
    }

    /// The path part of the target, without the query.
    public var path: String { String(target.split(separator: "?", maxSplits: 1).first ?? "") }

    /// The first value of a header, matched case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// Whether the body arrives with chunked transfer encoding.
    public var isChunked: Bool {
        if case .chunked = framing { return true }
        return false
    }

    /// Reads body bytes into `buffer`; 0 at the end of the body.
    public func readBody(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let socket: ServerSocket
        switch source {
        case .socket(let connection): socket = connection
        case .inProcess(let exchange): return try readInProcess(from: exchange, into: buffer)
        }
        switch framing {
        case .length(let remaining):
            guard remaining > 0, buffer.count > 0 else { return 0 }
            let want = Int(min(Int64(buffer.count), remaining))
            let count = try socket.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]))
            guard count > 0 else { throw ServerSocketError.closedEarly }
            framing = .length(remaining: remaining - Int64(count))
            bodyBytesRead += Int64(count)
            return count
        case .chunked(var remaining, let finished):
            guard !finished, buffer.count > 0 else { return 0 }
            if remaining == 0 {
                guard let sizeLine = try socket.readLine(limit: 1024) else { throw ServerSocketError.closedEarly }
                let sizeText = String(decoding: sizeLine, as: UTF8.self).split(separator: ";").first ?? ""
                guard let size = Int64(sizeText.trimmingCharacters(in: .whitespaces), radix: 16), size >= 0 else {
                    throw ServerSocketError.malformed("chunk size")
                }
                if size == 0 {
                    // Trailer fields, then the empty line; 64 KiB of them at most.
                    var trailerBytes = 0
                    while let line = try socket.readLine(limit: 64 * 1024), !line.isEmpty {
                        trailerBytes += line.count + 2
                        guard trailerBytes <= 64 * 1024 else { throw ServerSocketError.malformed("trailers over 64 KiB") }
                    }
                    framing = .chunked(remainingInChunk: 0, finished: true)
                    return 0
                }
                remaining = size
            }
            let want = Int(min(Int64(buffer.count), remaining))
            let count = try socket.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]))
            guard count > 0 else { throw ServerSocketError.closedEarly }
            remaining -= Int64(count)
            if remaining == 0 {
                guard let end = try socket.readLine(limit: 2), end.isEmpty else { throw ServerSocketError.malformed("chunk end") }
            }
            framing = .chunked(remainingInChunk: remaining, finished: false)
            bodyBytesRead += Int64(count)
            return count
        }
    }

    /// Reads body bytes from an in-process exchange's pipe; its failure (the request body broke
    /// its word, the transport gave up) ends the exchange with the transport's error first.
    private func readInProcess(from exchange: InProcessExchange, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard !bodyFinished, buffer.count > 0 else { return 0 }
        var want = buffer.count
        if case .length(let remaining) = framing { want = Int(min(Int64(want), remaining)) }
        switch exchange.body.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]), idleLimit: nil) {
        case .bytes(let count):
            bodyBytesRead += Int64(count)
            if case .length(let remaining) = framing { framing = .length(remaining: remaining - Int64(count)) }
            exchange.noteBodyRead()
            return count
        case .end, .wouldBlock:
            // The pipe holds a body to its declared length, so only an unsized (chunked) one ends here.
            guard case .chunked = framing else { throw ServerSocketError.closedEarly }
            framing = .chunked(remainingInChunk: 0, finished: true)
            return 0
        case .failed(let failure):
            exchange.fail(exchange.error(failure.kind, failure.message, underlying: failure.underlying))
            throw ServerSocketError.closedEarly
        }
    }

    /// Reads the rest of the body into memory.
    /// - Throws: `ServerSocketError.malformed` past `limit` bytes, or socket errors.
    public func readBody(limit: Int = 16 * 1024 * 1024) throws -> [UInt8] {
        var body: [UInt8] = []
        var scratch = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = try scratch.withUnsafeMutableBytes { try readBody(into: $0) }
            if count == 0 { return body }
            body += scratch[0..<count]
            guard body.count <= limit else { throw ServerSocketError.malformed("a body over \(limit) bytes") }
        }
    }

    /// Reads and drops the rest of the body, calling `inspect` with each piece and its offset.
    public func consumeBody(_ inspect: (UnsafeRawBufferPointer, Int64) throws -> Void = { _, _ in }) throws {
        var scratch = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let offset = bodyBytesRead
            let count = try scratch.withUnsafeMutableBytes { try readBody(into: $0) }
            if count == 0 { return }
            try scratch.withUnsafeBytes { try inspect(UnsafeRawBufferPointer(rebasing: $0[0..<count]), offset) }
        }
    }

    /// Whether the body has been read to its end.
    package var bodyFinished: Bool {
        switch framing {
        case .length(let remaining): remaining == 0
        case .chunked(_, let finished): finished
        }
    }
}
