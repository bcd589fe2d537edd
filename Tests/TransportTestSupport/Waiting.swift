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

/// Runs `body` and returns the `Failure` it throws, or `nil` if it throws nothing or something
/// else (the caller's `#expect` then fails with the value).
public func thrownError<Failure: Error>(_ type: Failure.Type, _ body: () async throws -> Void) async -> Failure? {
    do {
        try await body()
        return nil
    } catch {
        return error as? Failure
    }
}

/// Runs `body` and returns the `TransportError` it throws (see ``thrownError(_:_:)``).
public func transportError(_ body: () async throws -> Void) async -> TransportError? {
    await thrownError(TransportError.self, body)
}

/// Waits until `counter` stops moving (no change for half a second; 30 s at most), as when a
/// server has stalled on a reader that stopped reading.
package func waitUntilSteady(_ counter: Locked<Int64>) async {
    var last: Int64 = -1
    for _ in 0..<60 {
        try? await Task.sleep(nanoseconds: 500_000_000)
        let now = counter.value
        if now == last { return }
        last = now
    }
}
