import Foundation
import Transport
import TestSupport
import TransportTestSupport
import URLSessionTransport

extension TemporaryDirectory {
    /// A directory named for this test target.
    init() throws { try self.init(prefix: "urlsession-transport") }

    func remove() { cleanup() }
}

/// Polls `condition` until it holds or `timeout` seconds pass, without blocking a thread.
func eventually(timeout: TimeInterval = 120, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 20_000_000)
    }
    return condition()
}

/// Runs `body` and returns the `TransportError` it throws, or `nil` if it throws nothing or
/// something else (the caller's `#expect` then fails with the value).
func transportError(_ body: () async throws -> Void) async -> TransportError? {
    do {
        try await body()
        return nil
    } catch let error as TransportError {
        return error
    } catch {
        return nil
    }
}

extension URLSessionTransport {
    /// A transport with short limits, so failure tests finish quickly.
    static func forTests(idle: TimeInterval = 60, total: TimeInterval = 120,
                         configure: (inout Configuration) -> Void = { _ in }) -> URLSessionTransport {
        var configuration = Configuration()
        configuration.idleTimeout = idle
        configuration.requestTimeout = total
        configure(&configuration)
        return URLSessionTransport(configuration: configuration)
    }
}
