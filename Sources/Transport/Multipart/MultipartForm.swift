import Foundation
import ErrorKinds

/// A `multipart/form-data` body (RFC 7578) built so that its exact bytes are known before sending.
///
/// Signed station calls hash the raw body, boundaries and part headers included, so the body must
/// be fixed once and then sent byte for byte. `encoded()` gives those bytes in memory; `stream()`
/// yields the same bytes with file parts read from disk (or produced, ``addFile(_:filename:contentType:byteCount:producedBy:)``)
/// in chunks, and `contentLength` gives their total up front, so a large upload goes out with a
/// `Content-Length` (stations do not size-check chunked uploads) in constant memory. Hash with
/// `forEachChunk` (or by reading `stream()`), then send `stream()`: both read the same bytes, and
/// the stream is restartable, so a transport that must send the body again reads it all again.
///
/// The layout is what browsers and Python `requests` produce, and what the station's parser
/// (Starlette over python-multipart) reads:
///
///     --<boundary>\r\n
///     Content-Disposition: form-data; name="<name>"[; filename="<filename>"]\r\n
///     [Content-Type: <type>\r\n]
///     \r\n
///     <content>\r\n
///     …
///     --<boundary>--\r\n
///
/// Names and filenames are UTF-8 inside quotes, with `\` and `"` backslash-escaped (the parser
/// unescapes exactly these two); CR, LF and NUL cannot be expressed and are rejected. Parts without
/// a filename are plain form fields; Starlette caps a field at 1 MiB, so large content belongs in a
/// file part.
public struct MultipartForm: Sendable {
    /// The boundary between parts.
    public let boundary: String
    private let boundaryChosenByCaller: Bool
    private var segments: [Segment] = []
    private var partCount = 0

    /// A form with a fresh random boundary (`cipher-` and 32 hex digits), which no content will
    /// contain in practice.
    public init() {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef")
        let suffix = String((0..<32).map { _ in digits[Int(generator.next() % 16)] })
        boundary = "cipher-" + suffix
        boundaryChosenByCaller = false
    }

    /// A form with a given boundary, for reproducible bodies (tests, known-answer vectors).
    ///
    /// In-memory content is checked against this boundary as parts are added.
    /// - Throws: `MultipartForm.Error.invalidBoundary` unless the boundary is 1–70 characters from
    ///   RFC 2046's set (letters, digits, `'()+_,-./:=?` and space, not ending in a space).
    public init(boundary: String) throws {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'()+_,-./:=? ".utf8)
        guard (1...70).contains(boundary.utf8.count), boundary.utf8.allSatisfy(allowed.contains),
              boundary.utf8.last != UInt8(ascii: " ")
        else { throw Error.invalidBoundary(boundary) }
        self.boundary = boundary
        boundaryChosenByCaller = true
    }

    /// The `Content-Type` header value to send with this body.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// Adds a plain form field.
    ///
    /// - Throws: `MultipartForm.Error.invalidName` if `name` holds CR, LF or NUL;
    ///   `.boundaryInContent` if the caller chose the boundary and the value contains it.
    public mutating func addField(_ name: String, value: String) throws {
        let content = Data(value.utf8)
        try checkContent(content, part: name)
        try appendHeader(name: name, filename: nil, contentType: nil)
        appendBytes(content)
    }

    /// Adds a file part from bytes in memory.
    ///
    /// - Throws: `MultipartForm.Error.invalidName` if `name`, `filename` or `contentType` holds CR,
    ///   LF or NUL; `.boundaryInContent` if the caller chose the boundary and `data` contains it.
    public mutating func addFile(
        _ name: String, filename: String, contentType: String = "application/octet-stream", data: Data
    ) throws {
        try checkContent(data, part: name)
        try appendHeader(name: name, filename: filename, contentType: contentType)
        appendBytes(data)
    }

    /// Adds a file part read from disk when the body is encoded or streamed.
    ///
    /// The file's size and modification time are recorded now; reading it later fails with
    /// `.fileChanged` if either differs, because the body's length and hash were fixed from them.
    /// - Throws: `MultipartForm.Error.invalidName` for CR, LF or NUL in `name`, `filename` or
    ///   `contentType`; `.fileUnreadable` if the file cannot be examined.
    public mutating func addFile(
        _ name: String, filename: String, contentType: String = "application/octet-stream", contentsOf fileURL: URL
    ) throws {
        let snapshot = try FileSnapshot(url: fileURL)
        try appendHeader(name: name, filename: filename, contentType: contentType)
        segments.append(.file(snapshot))
    }

    /// Adds a file part whose `byteCount` bytes are produced whenever the body is read, never
    /// held whole: content encrypted as it is sent, say.
    ///
    /// `makeReader` is called at the start of every reading of the form (``encoded()``,
    /// ``forEachChunk(chunkSize:_:)``, each ``stream(chunkSize:)`` and each restart of one) and
    /// returns that reading's chunk function, which yields the part's bytes in order and then
    /// `nil`. Every reading must yield the same bytes, since the body's length (and a signature
    /// over its hash) is fixed from them. Both functions are called by one reader at a time.
    ///
    /// Reading the form throws what `makeReader` or a chunk function throws, unchanged, and
    /// `MultipartForm.Error.contentChanged` when a reading yields more or fewer than `byteCount`
    /// bytes (a negative count is taken as 0).
    /// - Throws: `MultipartForm.Error.invalidName` for CR, LF or NUL in `name`, `filename` or `contentType`.
    public mutating func addFile(
        _ name: String, filename: String, contentType: String = "application/octet-stream", byteCount: Int64,
        producedBy makeReader: @escaping @Sendable () throws -> () throws -> Data?
    ) throws {
        try appendHeader(name: name, filename: filename, contentType: contentType)
        segments.append(.produced(ProducedPart(name: name, byteCount: max(0, byteCount), makeReader: makeReader)))
    }

    /// The total body length in bytes, known without reading any file.
    public var contentLength: Int64 {
        segments.reduce(Int64(closingBytes.count)) { total, segment in
            switch segment {
            case .bytes(let data): total + Int64(data.count)
            case .file(let snapshot): total + snapshot.size
            case .produced(let part): total + part.byteCount
            }
        }
    }

    /// The whole body in memory, file parts read from disk.
    ///
    /// - Throws: `MultipartForm.Error.fileUnreadable` or `.fileChanged` for file parts; for a
    ///   produced part, what it throws or `.contentChanged`.
    public func encoded() throws -> Data {
        var body = Data()
        body.reserveCapacity(Int(clamping: contentLength))
        try forEachChunk { body.append($0) }
        return body
    }

    /// Calls `body` with the body's bytes in order, in chunks of at most `chunkSize` bytes for file
    /// parts, for example to hash the body before sending it.
    ///
    /// - Throws: `MultipartForm.Error.fileUnreadable` or `.fileChanged` for file parts (for a
    ///   produced part, what it throws or `.contentChanged`), or what
    ///   `body` throws.
    public func forEachChunk(chunkSize: Int = 256 * 1024, _ body: (Data) throws -> Void) throws {
        let reader = Reader(segments: segments + [.bytes(closingBytes)], chunkSize: chunkSize)
        while let chunk = try reader.next() { try body(chunk) }
    }

    /// The body as a stream with its length, reading file parts in chunks of `chunkSize` bytes.
    /// Each call returns a new stream that starts from the first byte, and the stream is
    /// restartable (``HTTPBodyStream/restarted()`` reads the parts again from the first byte).
    ///
    /// Reading the stream throws `MultipartForm.Error.fileUnreadable` or `.fileChanged` when a file
    /// part cannot be read as recorded, and what a produced part throws.
    public func stream(chunkSize: Int = 256 * 1024) -> HTTPBodyStream {
        let segments = segments + [.bytes(closingBytes)]
        return HTTPBodyStream(length: contentLength, restartable: {
            let reader = Reader(segments: segments, chunkSize: chunkSize)
            return { try reader.next() }
        })
    }

    /// The body to send: the bytes themselves when every part is in memory, otherwise `stream()`
    /// (file parts are then read while sending).
    public func requestBody() -> HTTPRequestBody {
        var bytes = Data()
        for segment in segments {
            guard case .bytes(let data) = segment else { return .stream(stream()) }
            bytes.append(data)
        }
        return .bytes(bytes + closingBytes)
    }

    /// Why a form could not be built or read.
    ///
    /// A struct rather than an enum, so a kind added in a later release does not break an app's
    /// `switch`: switch over ``kind`` (`case .fileChanged:`, ending with `default:`) and read the details
    /// from the properties. Two errors are equal when their kind and details are equal.
    public struct Error: KindedError, Sendable {
        /// What went wrong, without the details: compare it or `switch` over it (`case .fileChanged:`).
        public typealias Kind = ErrorKind<MultipartForm.Error>

        private enum Detail: Hashable, Sendable {
            case invalidBoundary(String)
            case invalidName(String)
            case boundaryInContent(part: String)
            case fileUnreadable(path: String, reason: String)
            case fileChanged(path: String)
            case contentChanged(part: String)
        }

        /// What went wrong.
        public let kind: Kind
        private let detail: Detail

        private init(_ detail: Detail, _ kind: Kind) { (self.detail, self.kind) = (detail, kind) }

        /// The boundary breaks RFC 2046's rules.
        public static func invalidBoundary(_ boundary: String) -> Error {
            Error(.invalidBoundary(boundary), .invalidBoundary)
        }

        /// A name, filename or content type holds CR, LF or NUL.
        public static func invalidName(_ name: String) -> Error { Error(.invalidName(name), .invalidName) }

        /// Content of the named part contains the caller's boundary.
        public static func boundaryInContent(part: String) -> Error {
            Error(.boundaryInContent(part: part), .boundaryInContent)
        }

        /// A file part's file could not be opened, examined or read (path, reason).
        public static func fileUnreadable(path: String, reason: String) -> Error {
            Error(.fileUnreadable(path: path, reason: reason), .fileUnreadable)
        }

        /// A file part's file changed after it was added (path): its size, modification time or
        /// the number of bytes read differs from what was recorded.
        public static func fileChanged(path: String) -> Error { Error(.fileChanged(path: path), .fileChanged) }

        /// A produced part's reading yielded more or fewer bytes than its declared count (part name).
        public static func contentChanged(part: String) -> Error { Error(.contentChanged(part: part), .contentChanged) }

        /// The boundary, for `Kind.invalidBoundary`.
        public var boundary: String? { if case .invalidBoundary(let value) = detail { value } else { nil } }

        /// The name, filename or content type, for `Kind.invalidName`.
        public var name: String? { if case .invalidName(let value) = detail { value } else { nil } }

        /// The part's name, for `Kind.boundaryInContent` and `Kind.contentChanged`.
        public var part: String? {
            switch detail {
            case .boundaryInContent(let value), .contentChanged(let value): value
            default: nil
            }
        }

        /// The file's path, for `Kind.fileUnreadable` and `Kind.fileChanged`.
        public var path: String? {
            switch detail {
            case .fileUnreadable(let value, _), .fileChanged(let value): value
            default: nil
            }
        }

        /// Why the file could not be read, for `Kind.fileUnreadable`.
        public var reason: String? { if case .fileUnreadable(_, let value) = detail { value } else { nil } }

        /// A readable explanation.
        public var description: String {
            switch detail {
            case .invalidBoundary(let boundary): "invalid multipart boundary \(boundary.debugDescription)"
            case .invalidName(let name): "multipart name \(name.debugDescription) contains CR, LF or NUL"
            case .boundaryInContent(let part): "the content of part \(part.debugDescription) contains the boundary"
            case .fileUnreadable(let path, let reason): "cannot read \(path): \(reason)"
            case .fileChanged(let path): "\(path) changed after it was added to the form"
            case .contentChanged(let part): "part \(part.debugDescription) yielded other than its declared byte count"
            }
        }
    }

    // MARK: Building

    /// The close delimiter, preceded by the CRLF that ends the last part's content.
    private var closingBytes: Data { Self.closing(boundary: boundary, afterParts: partCount > 0) }

    private static func closing(boundary: String, afterParts: Bool) -> Data {
        Data(((afterParts ? "\r\n" : "") + "--\(boundary)--\r\n").utf8)
    }

    private mutating func appendHeader(name: String, filename: String?, contentType: String?) throws {
        appendBytes(try Self.header(boundary: boundary, name: name, filename: filename, contentType: contentType,
                                    first: partCount == 0))
        partCount += 1
    }

    /// A part's delimiter and headers. Every part after the first starts with the CRLF that ends
    /// the previous part's content.
    private static func header(boundary: String, name: String, filename: String?, contentType: String?, first: Bool) throws -> Data {
        var header = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(try quoted(name))\""
        if let filename { header += "; filename=\"\(try quoted(filename))\"" }
        header += "\r\n"
        if let contentType {
            try rejectLineBreaks(contentType)
            header += "Content-Type: \(contentType)\r\n"
        }
        header += "\r\n"
        return Data(((first ? "" : "\r\n") + header).utf8)
    }

    /// A part as ``contentLength(boundaryByteCount:parts:)`` sees it: its names and its content's length.
    package struct PartLayout: Sendable {
        let name: String
        let filename: String?
        let contentType: String?
        let byteCount: Int64

        /// A plain field holding `value` (``addField(_:value:)``).
        package static func field(_ name: String, value: String) -> Self {
            Self(name: name, filename: nil, contentType: nil, byteCount: Int64(value.utf8.count))
        }

        /// A file part of `byteCount` bytes (``addFile(_:filename:contentType:contentsOf:)``).
        package static func file(
            _ name: String, filename: String, contentType: String = "application/octet-stream", byteCount: Int64
        ) -> Self {
            Self(name: name, filename: filename, contentType: contentType, byteCount: byteCount)
        }
    }

    /// The ``contentLength`` of a form with these parts, in this order, and a boundary of
    /// `boundaryByteCount` bytes (a fresh form's by default), from the framing alone: nothing is
    /// built or read.
    ///
    /// - Throws: `MultipartForm.Error.invalidName` as adding the parts would.
    package static func contentLength(boundaryByteCount: Int = freshBoundaryByteCount, parts: [PartLayout]) throws -> Int64 {
        let boundary = String(repeating: "-", count: boundaryByteCount)
        var total = Int64(closing(boundary: boundary, afterParts: !parts.isEmpty).count)
        for (index, part) in parts.enumerated() {
            let header = try header(boundary: boundary, name: part.name, filename: part.filename, contentType: part.contentType,
                                    first: index == 0)
            total += Int64(header.count) + part.byteCount
        }
        return total
    }

    /// The length of the boundary ``init()`` chooses: `cipher-` and 32 hex digits.
    package static let freshBoundaryByteCount = 39

    private mutating func appendBytes(_ data: Data) {
        if case .bytes(let previous)? = segments.last {
            segments[segments.count - 1] = .bytes(previous + data)
        } else {
            segments.append(.bytes(data))
        }
    }

    private func checkContent(_ content: Data, part: String) throws {
        guard boundaryChosenByCaller else { return }
        if content.range(of: Data("--\(boundary)".utf8)) != nil { throw Error.boundaryInContent(part: part) }
    }

    private static func quoted(_ text: String) throws -> String {
        try rejectLineBreaks(text)
        return text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }

    private static func rejectLineBreaks(_ text: String) throws {
        if text.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) { throw Error.invalidName(text) }
    }
}

extension MultipartForm {
    /// A run of bytes in memory, a file part's content, or a produced part's.
    fileprivate enum Segment: Sendable {
        case bytes(Data)
        case file(FileSnapshot)
        case produced(ProducedPart)
    }

    /// A part whose bytes come from a new chunk function at each reading.
    fileprivate struct ProducedPart: Sendable {
        let name: String
        let byteCount: Int64
        let makeReader: @Sendable () throws -> () throws -> Data?
    }

    /// A file part's path with the size and modification time recorded when it was added.
    fileprivate struct FileSnapshot: Sendable {
        let url: URL
        let size: Int64
        let modified: Date?

        init(url: URL) throws {
            do {
                let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
                guard (attributes[.type] as? FileAttributeType) == .typeRegular,
                      let size = (attributes[.size] as? NSNumber)?.int64Value
                else { throw Error.fileUnreadable(path: url.path, reason: "not a regular file") }
                self.url = url
                self.size = size
                self.modified = attributes[.modificationDate] as? Date
            } catch let error as Error {
                throw error
            } catch {
                throw Error.fileUnreadable(path: url.path, reason: error.localizedDescription)
            }
        }

        /// Opens the file after checking it still matches the snapshot.
        func open() throws -> FileHandle {
            let now = try FileSnapshot(url: url)
            guard now.size == size, now.modified == modified else { throw Error.fileChanged(path: url.path) }
            do {
                return try FileHandle(forReadingFrom: url)
            } catch {
                throw Error.fileUnreadable(path: url.path, reason: error.localizedDescription)
            }
        }
    }

    /// Walks the segments, reading file parts in chunks. `HTTPBodyStream` never calls `next`
    /// concurrently; the lock keeps a misuse from corrupting state.
    fileprivate final class Reader: @unchecked Sendable {
        private let segments: [Segment]
        private let chunkSize: Int
        private let lock = NSLock()
        private var index = 0
        private var file: (handle: FileHandle, snapshot: FileSnapshot, remaining: Int64)?
        private var produced: (next: () throws -> Data?, part: ProducedPart, remaining: Int64)?

        init(segments: [Segment], chunkSize: Int) {
            self.segments = segments
            self.chunkSize = max(1, chunkSize)
        }

        deinit { try? file?.handle.close() }

        func next() throws -> Data? {
            lock.lock()
            defer { lock.unlock() }
            while true {
                if let current = produced {
                    guard let chunk = try current.next() else {
                        produced = nil
                        guard current.remaining == 0 else { throw Error.contentChanged(part: current.part.name) }
                        continue
                    }
                    guard Int64(chunk.count) <= current.remaining else {
                        produced = nil
                        throw Error.contentChanged(part: current.part.name)
                    }
                    produced?.remaining -= Int64(chunk.count)
                    if chunk.isEmpty { continue }
                    return chunk
                }
                if let current = file {
                    if current.remaining == 0 {
                        // The recorded size is read; the file must end here too.
                        let extra = try read(current.handle, count: 1, snapshot: current.snapshot)
                        try? current.handle.close()
                        file = nil
                        guard extra.isEmpty else { throw Error.fileChanged(path: current.snapshot.url.path) }
                        continue
                    }
                    let want = Int(min(Int64(chunkSize), current.remaining))
                    let chunk = try read(current.handle, count: want, snapshot: current.snapshot)
                    guard !chunk.isEmpty else {
                        try? current.handle.close()
                        file = nil
                        throw Error.fileChanged(path: current.snapshot.url.path)
                    }
                    file?.remaining -= Int64(chunk.count)
                    return chunk
                }
                guard index < segments.count else { return nil }
                let segment = segments[index]
                index += 1
                switch segment {
                case .bytes(let data):
                    if !data.isEmpty { return data }
                case .file(let snapshot):
                    file = (try snapshot.open(), snapshot, snapshot.size)
                case .produced(let part):
                    produced = (try part.makeReader(), part, part.byteCount)
                }
            }
        }

        private func read(_ handle: FileHandle, count: Int, snapshot: FileSnapshot) throws -> Data {
            do {
                return try handle.read(upToCount: count) ?? Data()
            } catch {
                throw Error.fileUnreadable(path: snapshot.url.path, reason: error.localizedDescription)
            }
        }
    }
}

extension ErrorKind where Failure == MultipartForm.Error {
    /// The boundary breaks RFC 2046's rules.
    public static var invalidBoundary: Self { Self() }
    /// A name, filename or content type holds CR, LF or NUL.
    public static var invalidName: Self { Self() }
    /// Content of the named part contains the caller's boundary.
    public static var boundaryInContent: Self { Self() }
    /// A file part's file could not be opened, examined or read (path, reason).
    public static var fileUnreadable: Self { Self() }
    /// A file part's file changed after it was added (path): its size, modification time or
    /// the number of bytes read differs from what was recorded.
    public static var fileChanged: Self { Self() }
    /// A produced part's reading yielded more or fewer bytes than its declared count (part name).
    public static var contentChanged: Self { Self() }
    /// Every kind known to this version of the package, for an app's tests. A later version may
    /// add kinds: a `switch` still ends with `default:`.
    public static var knownValues: [Self] {
        [.invalidBoundary, .invalidName, .boundaryInContent, .fileUnreadable, .fileChanged, .contentChanged]
    }
}
