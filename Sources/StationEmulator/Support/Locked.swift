import Foundation

/// A value behind a lock, shared between the server's threads and the tests.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    /// Wraps `value`.
    init(_ value: Value) { stored = value }

    /// Runs `body` with exclusive access to the value.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&stored)
    }

    /// A copy of the value.
    var value: Value { withLock { $0 } }
}
