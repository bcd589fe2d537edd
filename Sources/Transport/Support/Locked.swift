import Foundation

/// A value behind a lock: the lock type of the package's transports, loopback server,
/// emulator, client and CLI.
///
/// `NSLock` rather than `Synchronization.Mutex`, which needs iOS 18 / macOS 15 (the floor is
/// iOS 16 / macOS 13).
package final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    /// Wraps `value`.
    package init(_ value: Value) { stored = value }

    /// Runs `body` with exclusive access to the value.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&stored)
    }

    /// A copy of the value.
    package var value: Value { withLock { $0 } }
}
