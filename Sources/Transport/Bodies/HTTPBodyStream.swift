import Foundation
import ErrorKinds

/// A body that arrives or leaves in chunks: an `AsyncSequence` of `Data`, with its total length
/// when known.
///
/// The same type carries streamed request bodies (`HTTPRequestBody.stream`) and streamed response
/// bodies (`HTTPResponseBody.stream`). Each stream is single-pass: the chunks come from one
/// underlying source, so iterate it once; a second iterator continues where the first one stopped.
/// A *restartable* stream (``init(length:restartable:)``, a `MultipartForm`'s ``MultipartForm/stream(chunkSize:)``,
/// bytes in memory) can also give a fresh stream of the same bytes from the first one,
/// ``restarted()``: what a transport uses when it must send a request body again (URLSession's
/// `needNewBodyStream`, libcurl's rewind on a reused connection).
public struct HTTPBodyStream: AsyncSequence, Sendable {
    /// One chunk of bytes. Chunks are never empty.
    public typealias Element = Data

    /// The total number of bytes the stream yields, when known up front.
    public let length: Int64?

    private let pull: @Sendable () async throws -> Data?
    /// Makes the `next` function of a new reading from the first byte; `nil` for a one-shot stream.
    private let restart: (@Sendable () -> @Sendable () async throws -> Data?)?

    /// A stream whose chunks come from calling `next` until it returns `nil`.
    ///
    /// `next` is called by one reader at a time, never concurrently. An error it throws ends the
    /// stream with that error (a request body that fails this way fails its transfer).
    public init(length: Int64?, next: @escaping @Sendable () async throws -> Data?) {
        self.length = length
        self.pull = next
        self.restart = nil
    }

    /// A stream that can be read again from its first byte: `makeNext` is called for this stream's
    /// reading and again for each ``restarted()`` one, and returns that reading's `next` function
    /// (called as in ``init(length:next:)``). Every reading must yield the same bytes: a transport
    /// that restarts a request body sends what the first reading would have, under the same
    /// `Content-Length` and signature.
    public init(length: Int64?, restartable makeNext: @escaping @Sendable () -> @Sendable () async throws -> Data?) {
        self.length = length
        self.pull = makeNext()
        self.restart = makeNext
    }

    /// Whether ``restarted()`` gives a fresh stream.
    public var isRestartable: Bool { restart != nil }

    /// A new stream of the same bytes from the first one, independent of this stream's reading;
    /// `nil` for a one-shot stream (``init(length:next:)``, or over an `AsyncSequence`).
    public func restarted() -> HTTPBodyStream? {
        guard let restart else { return nil }
        return HTTPBodyStream(length: length, restartable: restart)
    }

    /// A stream over any `AsyncSequence` of `Data`, such as an `AsyncThrowingStream`.
    ///
    /// The sequence is iterated once, lazily, when the stream is first read.
    public init<Base: AsyncSequence & Sendable>(length: Int64?, _ base: Base) where Base.Element == Data {
        let box = IteratorBox(base)
        self.init(length: length, next: { try await box.next() })
    }

    /// A stream over bytes already in memory, in chunks of `chunkSize` bytes. Handy to send
    /// in-memory content through a streaming path. It is restartable.
    public init(_ data: Data, chunkSize: Int = 64 * 1024) {
        let chunkSize = Swift.max(1, chunkSize)
        self.init(length: Int64(data.count), restartable: {
            let cursor = Cursor(data: data, chunkSize: chunkSize)
            return { cursor.next() }
        })
    }

    /// Reads the next chunk.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let pull: @Sendable () async throws -> Data?

        /// The next non-empty chunk, or `nil` at the end of the body.
        ///
        /// - Throws: whatever the source throws; for response bodies a `TransportError` when the
        ///   transfer fails or is cancelled mid-body.
        public mutating func next() async throws -> Data? {
            while let chunk = try await pull() {
                if !chunk.isEmpty { return chunk }
            }
            return nil
        }
    }

    /// Starts (or continues) reading the stream.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(pull: pull) }

    /// Reads the rest of the stream into memory.
    ///
    /// - Parameter maximumBytes: the most bytes to accept.
    /// - Throws: `HTTPBodyStreamError.tooLarge` as soon as the stream yields more than
    ///   `maximumBytes`, or whatever the stream throws.
    public func collect(upTo maximumBytes: Int) async throws -> Data {
        var data = Data()
        for try await chunk in self {
            guard chunk.count <= maximumBytes - data.count else {
                throw HTTPBodyStreamError.tooLarge(limit: maximumBytes)
            }
            data.append(chunk)
        }
        return data
    }
}

/// Why reading an `HTTPBodyStream` into memory failed.
///
/// A struct rather than an enum, so a kind added in a later release does not break an app's
/// `switch`: switch over ``kind`` (`case .tooLarge:`, ending with `default:`) and read the details
/// from the properties. Two errors are equal when their kind and details are equal.
public struct HTTPBodyStreamError: KindedError, Sendable {
    /// What went wrong, without the details: compare it or `switch` over it (`case .tooLarge:`).
    public typealias Kind = ErrorKind<HTTPBodyStreamError>

    private enum Detail: Hashable, Sendable {
        case tooLarge(limit: Int)
    }

    /// What went wrong.
    public let kind: Kind
    private let detail: Detail

    private init(_ detail: Detail, _ kind: Kind) { (self.detail, self.kind) = (detail, kind) }

    /// The stream held more than `limit` bytes.
    public static func tooLarge(limit: Int) -> HTTPBodyStreamError {
        HTTPBodyStreamError(.tooLarge(limit: limit), .tooLarge)
    }

    /// The limit the stream passed, for `Kind.tooLarge`.
    public var limit: Int? { switch detail { case .tooLarge(let value): value } }

    /// A readable explanation.
    public var description: String {
        switch detail {
        case .tooLarge(let limit): "the body is larger than \(limit) bytes"
        }
    }
}

extension ErrorKind where Failure == HTTPBodyStreamError {
    /// The stream held more than `limit` bytes.
    public static var tooLarge: Self { Self() }
    /// Every kind known to this version of the package, for an app's tests. A later version may
    /// add kinds: a `switch` still ends with `default:`.
    public static var knownValues: [Self] { [.tooLarge] }
}

/// Holds the iterator of a wrapped sequence. `HTTPBodyStream` promises its `next` closure is never
/// called concurrently, which is what makes the unchecked `Sendable` sound.
private final class IteratorBox<Base: AsyncSequence>: @unchecked Sendable where Base.Element == Data {
    private let base: Base
    private var iterator: Base.AsyncIterator?

    init(_ base: Base) { self.base = base }

    func next() async throws -> Data? {
        var current = iterator ?? base.makeAsyncIterator()
        defer { iterator = current }
        return try await current.next()
    }
}

/// Walks in-memory bytes chunk by chunk.
private final class Cursor: @unchecked Sendable {
    private let data: Data
    private let chunkSize: Int
    private let lock = NSLock()
    private var offset = 0

    init(data: Data, chunkSize: Int) {
        self.data = data
        self.chunkSize = chunkSize
    }

    func next() -> Data? {
        lock.lock()
        defer { lock.unlock() }
        guard offset < data.count else { return nil }
        let end = min(data.count, offset + chunkSize)
        let start = data.startIndex + offset
        offset = end
        return data.subdata(in: start..<(data.startIndex + end))
    }
}
