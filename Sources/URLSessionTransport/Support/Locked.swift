import Foundation

/// A value guarded by a lock, for the state shared between URLSession's delegate queue, the body
/// threads and Swift tasks.
///
/// `NSLock` rather than `Synchronization.Mutex`, so the module builds on every platform the SDK
/// supports without availability gates.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
