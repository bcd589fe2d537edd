import Foundation
import Transport

/// Reads one HTTP/1.1 response from bytes as they arrive: 1xx heads are skipped, the final head is
/// parsed line by line (`ResponseHeadParser`), and the body is framed by `Content-Length`, by
/// chunked coding or by the connection closing (RFC 9112 §6.3).
struct HTTP1ResponseReader {
    enum Outcome: Equatable {
        /// More bytes are needed.
        case needMore
        /// The response is complete; `reusable` says whether the connection may carry another request.
        case complete(reusable: Bool)
    }

    enum Failure: Error, Equatable {
        /// Not an HTTP/1.x response, or broken framing.
        case malformed(String)
        /// The head exceeds the limit.
        case headTooLarge(Int)
        /// The body exceeds the memory limit.
        case bodyTooLarge(Int)
    }

    private enum Framing {
        case none
        case length(Int)
        case chunked
        case untilClose
    }

    private enum Stage {
        case head
        case body(Framing)
        case chunkSize
        case chunkData(Int)
        case chunkDataEnd
        case trailers
        case done
    }

    let isHeadRequest: Bool
    let headLimit: Int
    let bodyLimit: Int

    private(set) var status: Int?
    private(set) var fields: [HTTPHeaders.Field] = []
    private(set) var body: [UInt8] = []
    /// Whether any byte of a response has arrived (a reused connection that dies before this may
    /// be retried).
    private(set) var receivedAnything = false

    private var stage = Stage.head
    /// Bytes received and not yet consumed: `buffer[start...]` (consumed bytes are dropped when
    /// new ones arrive, not line by line).
    private var buffer: [UInt8] = []
    private var start = 0
    private var pendingCount: Int { buffer.count - start }
    private var headBytes = 0
    private var versionMinor = 1
    private var connectionClose = false

    init(isHeadRequest: Bool, headLimit: Int, bodyLimit: Int) {
        self.isHeadRequest = isHeadRequest
        self.headLimit = headLimit
        self.bodyLimit = bodyLimit
    }

    /// Feeds bytes read from the connection.
    mutating func consume(_ bytes: UnsafeRawBufferPointer) throws(Failure) -> Outcome {
        if !bytes.isEmpty { receivedAnything = true }
        if case .done = stage {
            // Bytes after a complete response: the connection cannot be trusted for another one.
            return bytes.isEmpty ? .complete(reusable: isReusable) : .complete(reusable: false)
        }
        if case .body(.length(let remaining)) = stage, pendingCount == 0 {
            // The common case: body bytes go straight to the body.
            let take = min(remaining, bytes.count)
            try append(UnsafeRawBufferPointer(rebasing: bytes[0..<take]))
            stage = .body(.length(remaining - take))
            if remaining - take == 0 {
                stage = .done
                if take < bytes.count {
                    // The start of the next response (pipelining), kept for `takeLeftover()`.
                    buffer.removeAll(keepingCapacity: true)
                    start = 0
                    buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[take...]))
                }
                return .complete(reusable: take == bytes.count && isReusable)
            }
            return .needMore
        }
        if start > 0 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
        return try advance()
    }

    /// The connection closed (end of stream).
    mutating func consumeEnd() throws(Failure) -> Outcome {
        switch stage {
        case .done: return .complete(reusable: false)
        case .body(.untilClose):
            stage = .done
            return .complete(reusable: false)
        case .head where !receivedAnything:
            throw .malformed("the server closed the connection without a reply")
        default:
            throw .malformed("the connection closed before the response was complete")
        }
    }

    var headers: HTTPHeaders { HTTPHeaders(fields) }

    /// Once complete: whether the server keeps the connection open for another exchange (bytes
    /// already received after the response aside).
    var keepsConnection: Bool { isReusable }

    /// Once complete: the bytes received after the response, the start of the next one when
    /// requests are pipelined. Empties the reader's buffer.
    mutating func takeLeftover() -> [UInt8] {
        defer {
            buffer.removeAll()
            start = 0
        }
        return Array(buffer[start...])
    }

    /// HTTP/1.0 answers have already set `connectionClose` unless they asked to keep alive.
    private var isReusable: Bool { !connectionClose }

    private mutating func append(_ bytes: UnsafeRawBufferPointer) throws(Failure) {
        guard bytes.count <= bodyLimit - body.count else { throw .bodyTooLarge(bodyLimit) }
        body.append(contentsOf: bytes)
    }

    /// Removes one pending line and returns it without its CR LF, or `nil` when no line is
    /// complete yet. Head and trailer lines count against the head limit.
    private mutating func takeLine(countingAsHead: Bool) throws(Failure) -> ArraySlice<UInt8>? {
        guard let newline = buffer[start...].firstIndex(of: 0x0A) else {
            if countingAsHead, headBytes + pendingCount > headLimit { throw .headTooLarge(headLimit) }
            return nil
        }
        if countingAsHead {
            headBytes += newline + 1 - start
            if headBytes > headLimit { throw .headTooLarge(headLimit) }
        }
        var end = newline
        if end > start, buffer[end - 1] == 0x0D { end -= 1 }
        let line = buffer[start..<end]
        start = newline + 1
        return line
    }

    /// Moves up to `limit` pending bytes to the body; returns how many.
    private mutating func moveToBody(upTo limit: Int) throws(Failure) -> Int {
        let take = min(limit, pendingCount)
        guard take > 0 else { return 0 }
        guard take <= bodyLimit - body.count else { throw .bodyTooLarge(bodyLimit) }
        body.append(contentsOf: buffer[start..<(start + take)])
        start += take
        return take
    }

    private mutating func advance() throws(Failure) -> Outcome {
        while true {
            switch stage {
            case .head:
                guard let line = try takeLine(countingAsHead: true) else { return .needMore }
                try headLine(line)
            case .body(.none):
                stage = .done
            case .body(.length(let remaining)):
                let left = remaining - (try moveToBody(upTo: remaining))
                if left > 0 {
                    stage = .body(.length(left))
                    return .needMore
                }
                stage = .done
            case .body(.untilClose):
                _ = try moveToBody(upTo: pendingCount)
                return .needMore
            case .body(.chunked):
                stage = .chunkSize
            case .chunkSize:
                guard let line = try takeLine(countingAsHead: false) else {
                    if pendingCount > 4096 { throw .malformed("a chunk-size line is too long") }
                    return .needMore
                }
                let digits = line.prefix { $0 != UInt8(ascii: ";") && $0 != 0x20 && $0 != 0x09 }
                guard !digits.isEmpty, digits.count <= 15,
                      let size = Int(String(decoding: digits, as: UTF8.self), radix: 16), size >= 0
                else { throw .malformed("a chunk size is not hexadecimal") }
                stage = size == 0 ? .trailers : .chunkData(size)
            case .chunkData(let remaining):
                let left = remaining - (try moveToBody(upTo: remaining))
                if left > 0 {
                    stage = .chunkData(left)
                    return .needMore
                }
                stage = .chunkDataEnd
            case .chunkDataEnd:
                guard let line = try takeLine(countingAsHead: false) else {
                    if pendingCount > 2 { throw .malformed("a chunk does not end with CR LF") }
                    return .needMore
                }
                guard line.isEmpty else { throw .malformed("a chunk does not end with CR LF") }
                stage = .chunkSize
            case .trailers:
                // Trailer fields are read and dropped: they are not part of the head.
                guard let line = try takeLine(countingAsHead: true) else { return .needMore }
                if line.isEmpty { stage = .done }
            case .done:
                return .complete(reusable: pendingCount == 0 && isReusable)
            }
        }
    }

    private mutating func headLine(_ line: ArraySlice<UInt8>) throws(Failure) {
        if status == nil {
            // The first line must be a status line.
            guard case .status(let code) = ResponseHeadParser.parse(line: line) else {
                throw .malformed("the reply is not HTTP")
            }
            guard line.starts(with: "HTTP/1.".utf8), line.count > 7 else {
                throw .malformed("the reply is not HTTP/1.x")
            }
            versionMinor = line[line.startIndex + 7] == UInt8(ascii: "0") ? 0 : 1
            status = code
            return
        }
        switch ResponseHeadParser.parse(line: line) {
        case .endOfBlock:
            try endOfHead()
        case .field(let name, let value):
            fields.append(HTTPHeaders.Field(name: name, value: value))
        case .continuation(let text):
            if let last = fields.indices.last {
                fields[last].value += fields[last].value.isEmpty ? text : " " + text
            }
        case .status, .ignored:
            break
        }
    }

    /// A value of 1 to 18 ASCII digits and nothing else, as a number.
    static func plainNumber(_ text: String) -> Int? {
        var value = 0
        var count = 0
        for byte in text.utf8 {
            guard byte >= 0x30, byte <= 0x39, count < 18 else { return nil }
            value = value * 10 + Int(byte - 0x30)
            count += 1
        }
        return count > 0 ? value : nil
    }

    static func trimmed(_ text: Substring) -> Substring {
        var slice = text
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return slice
    }

    private mutating func endOfHead() throws(Failure) {
        guard let code = status else { throw .malformed("the reply is not HTTP") }
        if (100..<200).contains(code) {
            guard code != 101 else { throw .malformed("the server switched protocols") }
            status = nil
            fields.removeAll()
            return
        }
        // One pass over the fields for the three that frame the body.
        var keepAlive = false
        var lastCoding: Substring?
        var length: Int?
        for field in fields {
            if ASCII.equalsIgnoringCase(field.name, "connection") {
                for token in field.value.split(separator: ",") {
                    let trimmed = Self.trimmed(token)
                    if ASCII.equalsIgnoringCase(trimmed, "close") { connectionClose = true }
                    if ASCII.equalsIgnoringCase(trimmed, "keep-alive") { keepAlive = true }
                }
            } else if ASCII.equalsIgnoringCase(field.name, "transfer-encoding") {
                if let last = field.value.split(separator: ",").last { lastCoding = Self.trimmed(last) }
            } else if ASCII.equalsIgnoringCase(field.name, "content-length") {
                // The usual value, one plain number, read without splitting.
                if let value = Self.plainNumber(field.value) {
                    guard length == nil || length == value else { throw .malformed("the Content-Length is not one number") }
                    length = value
                    continue
                }
                for item in field.value.split(separator: ",", omittingEmptySubsequences: false) {
                    let text = Self.trimmed(item)
                    guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int(text),
                          length == nil || length == value
                    else { throw .malformed("the Content-Length is not one number") }
                    length = value
                }
            }
        }
        if versionMinor == 0 && !keepAlive { connectionClose = true }

        if isHeadRequest || code == 204 || code == 304 {
            stage = .body(.none)
        } else if let lastCoding {
            if ASCII.equalsIgnoringCase(lastCoding, "chunked") {
                stage = .body(.chunked)
            } else {
                stage = .body(.untilClose)
                connectionClose = true
            }
        } else if let length {
            guard length <= bodyLimit else { throw .bodyTooLarge(bodyLimit) }
            stage = .body(length == 0 ? .none : .length(length))
        } else {
            stage = .body(.untilClose)
            connectionClose = true
        }
    }
}
