import Foundation
import Transport

/// Polls `condition` until it holds or `timeout` seconds pass, without blocking a thread.
public func eventually(timeout: TimeInterval = 120, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 20_000_000)
    }
    return condition()
}

/// Runs `body` and returns the `TransportError` it throws, or `nil` if it throws nothing or
/// something else (the caller's `#expect` then fails with the value).
public func transportError(_ body: () async throws -> Void) async -> TransportError? {
    do {
        try await body()
        return nil
    } catch let error as TransportError {
        return error
    } catch {
        return nil
    }
}
