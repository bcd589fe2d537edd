import Foundation

// Helpers for transports that work on whole bodies in memory, such as an in-process station
// emulator or a test double: read any request body into `Data`, and hand a response body back in
// whatever form the caller asked for. With these, a conformance is a few lines:
//
//     func send(_ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions) async throws -> HTTPResponse {
//         let bytes = try await body.collect(upTo: limit, for: request)
//         let (status, headers, reply) = handle(request, bytes)
//         return HTTPResponse(status: status, headers: headers, body: try options.response.deliver(reply, for: request))
//     }

extension HTTPRequestBody {
    /// Reads the whole body into memory: the bytes, the file's content, or the stream to its end.
    ///
    /// - Parameters:
    ///   - maximumBytes: the most bytes to accept.
    ///   - request: the request the body belongs to, named in errors.
    /// - Throws: `TransportError` with kind `.requestBodyFailed` when the body is longer than
    ///   `maximumBytes`, a file cannot be read, or a stream throws or breaks its declared length;
    ///   `.cancelled` when the task is cancelled while reading a stream.
    public func collect(upTo maximumBytes: Int, for request: HTTPRequest) async throws -> Data {
        func failure(_ message: String, _ underlying: (any Error)? = nil) -> TransportError {
            TransportError(.requestBodyFailed, method: request.method, url: request.url, message: message,
                           underlying: underlying)
        }
        switch self {
        case .none:
            return Data()
        case .bytes(let data):
            guard data.count <= maximumBytes else { throw failure("the body is larger than \(maximumBytes) bytes") }
            return data
        case .file(let url):
            let data: Data
            do {
                data = try Data(contentsOf: url)
            } catch {
                throw failure("cannot read \(url.path)", error)
            }
            guard data.count <= maximumBytes else { throw failure("the body is larger than \(maximumBytes) bytes") }
            return data
        case .stream(let stream):
            let data: Data
            do {
                data = try await stream.collect(upTo: maximumBytes)
            } catch let error as HTTPBodyStreamError {
                throw failure(error.description, error)
            } catch is CancellationError {
                throw TransportError(.cancelled, method: request.method, url: request.url, message: "cancelled")
            } catch {
                throw failure("the request body stream failed: \(error)", error)
            }
            if let length = stream.length, Int64(data.count) != length {
                throw failure("the request body stream yielded \(data.count) bytes, not its declared \(length)")
            }
            return data
        }
    }
}

extension ResponseDestination {
    /// Hands a complete response body over the way this destination asks: as `.data` (within the
    /// limit), written to the file, or as a stream over the bytes.
    ///
    /// - Throws: `TransportError` with kind `.responseTooLarge` past a memory limit, or
    ///   `.responseBodyFailed` when the file cannot be written.
    public func deliver(_ data: Data, for request: HTTPRequest) throws -> HTTPResponseBody {
        switch self {
        case .memory(let limit):
            guard data.count <= limit else {
                throw TransportError(.responseTooLarge(limit: limit), method: request.method, url: request.url,
                                     message: "the response body exceeds \(limit) bytes")
            }
            return .data(data)
        case .file(let url):
            do {
                try data.write(to: url)
                try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
            } catch {
                throw TransportError(.responseBodyFailed, method: request.method, url: request.url,
                                     message: "cannot write \(url.path)", underlying: error)
            }
            return .file(url, byteCount: Int64(data.count))
        case .stream:
            return .stream(HTTPBodyStream(data))
        }
    }
}
