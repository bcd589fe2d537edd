import Foundation
import LoopbackHTTP
import Transport

/// What a case works with: the transport under test, and checks that fail with the case's name,
/// the expectation and the observed value.
struct ConformanceContext: Sendable {
    let caseName: String
    let transport: any HTTPTransport
    /// What ends with the case: stopping the servers of ``serve(_:)``, removing the directories of
    /// ``scratchDirectory()``.
    private let cleanups = Locked<[@Sendable () -> Void]>([])

    /// Runs a case body; anything it throws other than a ``ConformanceFailure`` becomes one.
    static func run(caseName: String, transport: any HTTPTransport,
                    _ body: @Sendable (ConformanceContext) async throws -> Void) async throws {
        let context = ConformanceContext(caseName: caseName, transport: transport)
        defer { for cleanup in context.cleanups.value.reversed() { cleanup() } }
        do {
            try await body(context)
        } catch let failure as ConformanceFailure {
            throw failure
        } catch {
            throw context.failure("running the case", expected: "no error", got: "\(error)")
        }
    }

    /// Starts a loopback server running `handler` for the rest of the case: it is stopped when
    /// the case ends, however it ends.
    func serve(_ handler: @escaping LoopbackHTTPServer.Handler) throws -> LoopbackHTTPServer {
        let server = try LoopbackHTTPServer(handler: handler)
        cleanups.withLock { $0.append(server.stop) }
        return server
    }

    /// A fresh empty directory for the rest of the case: it is removed when the case ends.
    func scratchDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("transport-conformance-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        cleanups.withLock { $0.append { try? FileManager.default.removeItem(at: directory) } }
        return directory
    }

    func failure(_ check: String, expected: String, got: String) -> ConformanceFailure {
        ConformanceFailure(caseName: caseName, check: check, expected: expected, got: got)
    }

    /// Fails unless `condition` holds.
    func expect(_ condition: Bool, _ check: @autoclosure () -> String, expected: @autoclosure () -> String,
                got: @autoclosure () -> String) throws {
        guard condition else { throw failure(check(), expected: expected(), got: got()) }
    }

    /// Fails unless `got == expected`.
    func expectEqual<Value: Equatable>(_ got: Value, _ expected: Value, _ check: @autoclosure () -> String) throws {
        guard got == expected else {
            throw failure(check(), expected: String(describing: expected), got: String(describing: got))
        }
    }

    /// Sends through the transport; a thrown error fails the check (the request should have worked).
    func send(_ request: HTTPRequest, body: HTTPRequestBody = .none,
              options: TransferOptions = TransferOptions()) async throws -> HTTPResponse {
        do {
            return try await transport.send(request, body: body, options: options)
        } catch {
            throw failure("\(request.method) \(request.url.path)", expected: "a response", got: "\(error)")
        }
    }

    /// Runs `body`, which must throw a `TransportError` of one of `kinds` naming `request`; returns it.
    @discardableResult
    func expectError(_ kinds: Set<TransportError.Kind>, _ check: String, request: HTTPRequest? = nil,
                     _ body: () async throws -> Void) async throws -> TransportError {
        let wanted = kinds.map { "TransportError \($0)" }.sorted().joined(separator: " or ")
        do {
            try await body()
        } catch let error as TransportError {
            try expect(kinds.contains(error.kind), check, expected: wanted, got: "\(error)")
            if let request {
                try expectEqual(error.url, request.url, "\(check): the error's URL")
                try expectEqual(error.method, request.method, "\(check): the error's method")
            }
            return error
        } catch {
            throw failure(check, expected: wanted, got: "\(type(of: error)): \(error)")
        }
        throw failure(check, expected: wanted, got: "no error")
    }

    /// Sends `request` expecting a `TransportError` of `kind` naming it; returns the error.
    @discardableResult
    func expectError(_ kind: TransportError.Kind, sending request: HTTPRequest, body: HTTPRequestBody = .none,
                     options: TransferOptions = TransferOptions(),
                     _ check: String? = nil) async throws -> TransportError {
        try await expectError([kind], check ?? "\(request.method) \(request.url.path)", request: request) {
            _ = try await transport.send(request, body: body, options: options)
        }
    }

    /// Waits until `started` holds (`what` says what that is), cancels `task`, and expects
    /// `.cancelled` (naming `request`, when given) and the server to see the connection close
    /// (`closed`).
    func expectCancellation<Success: Sendable>(of task: Task<Success, any Error>, once what: String,
                                               _ started: @Sendable () -> Bool, _ check: String,
                                               request: HTTPRequest? = nil, closed: Locked<Bool>) async throws {
        // Cancelled on every way out: a transport that fails the first check (one that spools an
        // endless upload before sending, say) must not go on filling the disk under later cases.
        defer { task.cancel() }
        try await eventually(what, started)
        task.cancel()
        try await expectError([.cancelled], check, request: request) { _ = try await task.value }
        try await eventually("the server seeing the connection close") { closed.value }
    }

    /// Sends each of `requests` (made for a server that answers 200) with `send`, expecting a
    /// `TransportError` of one of `kinds` naming it; then checks that none reached the server.
    func expectRefusedUnsent(_ kinds: Set<TransportError.Kind>, _ check: String,
                             requests: (LoopbackHTTPServer) -> [HTTPRequest],
                             send: @escaping @Sendable (HTTPRequest) async throws -> Void) async throws {
        let server = try serve(TestHandlers.ok())
        for request in requests(server) {
            try await expectError(kinds, "\(check): \(request.method) \(request.url) \(request.headers)", request: request) {
                try await send(request)
            }
        }
        try expectEqual(server.statistics.requestsReceived, 0, "requests the server received")
    }

    /// Collects a response body delivered in any form (at most `limit` bytes).
    func bodyBytes(of response: HTTPResponse, limit: Int = 16 * 1024 * 1024, _ check: String) async throws -> Data {
        switch response.body {
        case .data(let data):
            return data
        case .stream(let stream):
            do {
                return try await stream.collect(upTo: limit)
            } catch {
                throw failure("\(check): reading the streamed body", expected: "the whole body", got: "\(error)")
            }
        case .file(let url, _):
            return try Data(contentsOf: url)
        }
    }

    /// Waits (polling) until `condition` holds or `timeout` seconds pass; fails with `check` if it
    /// never does. Only a bound on waiting, never a measurement.
    func eventually(_ check: @autoclosure () -> String, timeout: TimeInterval = 60,
                    _ condition: @Sendable () -> Bool) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            guard Date() < deadline else {
                throw failure(check(), expected: "to happen within \(Int(timeout)) s", got: "it did not")
            }
            try? await Task.sleep(nanoseconds: 20_000_000)
        }
    }
}
