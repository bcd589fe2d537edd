import Foundation

/// Sends one HTTP request and returns its response: the single seam between the SDK and the network.
///
/// The SDK ships `CurlTransport` (libcurl); an app can bring its own, for example a `URLSession`
/// conformance on iOS or an in-process station emulator in tests. A conformance needs only `send`:
///
/// - Send `request` with `body`: `.none`, `.bytes`, `.file` (length from the file) or `.stream`
///   (with `Content-Length` when the stream knows its length, chunked otherwise). Send the header
///   fields in their order and spelling; set the framing headers yourself.
/// - Deliver the response body as `options.response` asks: `.memory` (fail with
///   `.responseTooLarge` past the limit), `.file` or `.stream` (return once the headers are in).
/// - Apply `options.timeouts`, or your defaults when it is `nil`: idle and total limits for
///   ordinary requests, only the idle limit when a body is a file or a stream.
/// - Report progress through `options.progress` when given.
/// - Abort the transfer when the calling task is cancelled, and throw `TransportError` with kind
///   `.cancelled`.
/// - Return every HTTP status as a response; throw `TransportError` only when no response could be
///   exchanged, with the kind that fits and the request's method and URL.
public protocol HTTPTransport: Sendable {
    /// Sends `request` with `body` and returns the response.
    ///
    /// - Parameters:
    ///   - request: method, absolute URL and header fields.
    ///   - body: the request body.
    ///   - options: where the response body goes, time limits, progress.
    /// - Returns: the response, for any HTTP status.
    /// - Throws: `TransportError` when the exchange fails (DNS, connect, TLS, pin, timeout, broken
    ///   connection, body source or destination, cancellation, invalid request).
    func send(_ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions) async throws -> HTTPResponse

    /// Sends independent requests, each safe to send more than once, and returns their outcomes
    /// in the same order.
    ///
    /// The default implementation sends them concurrently through `send(_:body:options:)`, so a
    /// conformance need not implement it. `CurlTransport` pipelines a batch to one host on one
    /// connection, which saves a round trip and most of the per-request system work for each
    /// request after the first.
    ///
    /// - Parameters:
    ///   - batch: the requests, with in-memory bodies.
    ///   - options: where each response body goes (only `.memory` makes sense for a batch), time
    ///     limits per request, progress (a transport may send a batch with progress one by one).
    /// - Returns: one outcome per request, in order: the response (any HTTP status) or the error
    ///   `send(_:body:options:)` would have thrown (`TransportError` with kind `.cancelled` for
    ///   the requests left when the calling task is cancelled).
    func send(batch: [HTTPBatchRequest], options: TransferOptions) async -> [Result<HTTPResponse, any Error>]
}

extension HTTPTransport {
    /// Sends `request` with `body`, collecting the response body in memory (default limits and
    /// timeouts).
    ///
    /// - Throws: `TransportError` as described on `send(_:body:options:)`.
    public func send(_ request: HTTPRequest, body: HTTPRequestBody = .none) async throws -> HTTPResponse {
        try await send(request, body: body, options: TransferOptions())
    }
}

extension HTTPTransport {
    /// Sends the requests of `batch` concurrently, one `send(_:body:options:)` each, and returns
    /// their outcomes in order (the default implementation of `send(batch:options:)`).
    public func send(batch: [HTTPBatchRequest], options: TransferOptions) async -> [Result<HTTPResponse, any Error>] {
        await sendConcurrently(batch, options: options)
    }

    /// One `send(_:body:options:)` per request, all at once; outcomes in the order of `batch`. What
    /// a transport falls back to for requests it cannot batch.
    public func sendConcurrently(_ batch: [HTTPBatchRequest], options: TransferOptions) async -> [Result<HTTPResponse, any Error>] {
        // One request needs no child task.
        guard batch.count > 1 else {
            guard let only = batch.first else { return [] }
            return [await outcome(of: only, options: options)]
        }
        return await withTaskGroup(of: (Int, Result<HTTPResponse, any Error>).self) { group in
            for (index, item) in batch.enumerated() {
                group.addTask { (index, await outcome(of: item, options: options)) }
            }
            var outcomes = [Result<HTTPResponse, any Error>?](repeating: nil, count: batch.count)
            for await (index, outcome) in group { outcomes[index] = outcome }
            return outcomes.map { outcome in
                outcome ?? .failure(CancellationError())
            }
        }
    }

    /// `send(_:body:options:)` of one batched request, its error kept as the outcome.
    private func outcome(of item: HTTPBatchRequest, options: TransferOptions) async -> Result<HTTPResponse, any Error> {
        do {
            return .success(try await send(item.request, body: item.requestBody, options: options))
        } catch {
            return .failure(error)
        }
    }
}
