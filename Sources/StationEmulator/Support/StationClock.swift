import Foundation
import Transport

/// The emulator's source of "now", in seconds since 1970 (fractional).
///
/// The station judges signed requests, pairing expiry and `created_at` by its clock. Tests inject a
/// ``ManualClock`` to move time (expire a PIN, make a request stale) without waiting.
public protocol StationClock: Sendable {
    /// The current time in seconds since 1970-01-01 UTC.
    func now() -> Double
}

/// The system's wall clock.
public struct SystemClock: StationClock {
    /// Creates the wall clock.
    public init() {}
    /// `Date().timeIntervalSince1970`.
    public func now() -> Double { Date().timeIntervalSince1970 }
}

/// A clock that moves only when told to: for tests of expiry and stale requests.
public final class ManualClock: StationClock {
    private let current: Locked<Double>

    /// Starts at `start` seconds since 1970 (by default, the wall clock now).
    public init(start: Double = Date().timeIntervalSince1970) { current = Locked(start) }

    /// The clock's current reading.
    public func now() -> Double { current.value }

    /// Moves the clock forward (or back, with a negative value) by `seconds`.
    public func advance(by seconds: Double) { current.withLock { $0 += seconds } }

    /// Sets the clock to `seconds` since 1970.
    public func set(_ seconds: Double) { current.withLock { $0 = seconds } }
}
