import Foundation

/// The body of a request.
///
/// In-memory bodies suit signed API calls (the signer hashes the exact bytes); file and stream bodies
/// send large content in constant memory.
public enum HTTPRequestBody: Sendable {
    /// No body.
    case none
    /// These exact bytes.
    case bytes(Data)
    /// The whole content of a local file, read while sending. Its size at send time becomes the
    /// `Content-Length`; a file that shrinks during the upload fails the transfer.
    case file(URL)
    /// Bytes produced while sending. With a known `length` the request carries `Content-Length`
    /// and a stream that yields a different number of bytes fails the transfer; without one the
    /// body goes out with chunked transfer encoding. Every stream the SDK sends has a `length` (a
    /// real station size-checks only a declared `Content-Length`); unsized streams are for an
    /// app's own requests to other servers.
    case stream(HTTPBodyStream)

    /// The body length when known without reading the body: bytes and sized streams; `nil` for
    /// files (sized when sent) and unsized streams. `.none` is 0.
    public var knownLength: Int64? {
        switch self {
        case .none: 0
        case .bytes(let data): Int64(data.count)
        case .file: nil
        case .stream(let stream): stream.length
        }
    }
}

/// The body of a response, in the form `TransferOptions.response` asked for.
public enum HTTPResponseBody: Sendable {
    /// The whole body, collected in memory.
    case data(Data)
    /// The body was written to this file; `byteCount` bytes were written.
    case file(URL, byteCount: Int64)
    /// The body, arriving while it is read. Read it to the end or drop it: dropping an unfinished
    /// stream cancels the transfer.
    case stream(HTTPBodyStream)

    /// The collected bytes for `.data`, otherwise `nil`.
    public var data: Data? {
        if case .data(let data) = self { return data }
        return nil
    }
}
