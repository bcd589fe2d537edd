#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Secret bytes of any length (an encoded private key, stored credentials) in one heap buffer
/// that is zeroed when the last copy is dropped: the zeroizable storage private keys travel in
/// between a key store and a key object.
///
/// Build it in place with ``init(count:initialize:)`` (so no other copy exists), or take over
/// an array with ``init(zeroing:)``; read it with ``withUnsafeBytes(_:)``. It never prints its
/// bytes, and equality is constant-time.
public struct SecretBytes: Sendable, Equatable, CustomStringConvertible {
    @usableFromInline let storage: SecureBytes

    /// Allocates `count` zero bytes and lets `initialize` write them; when `initialize` throws,
    /// the buffer is zeroed and freed and the error is rethrown.
    @inlinable public init<E: Error>(count: Int, initialize: (UnsafeMutableRawBufferPointer) throws(E) -> Void) throws(E) {
        storage = try SecureBytes(count: count, initialize: initialize)
    }

    /// A copy of `bytes` (the caller keeps its own copy, and zeroes it if it is secret).
    @inlinable public init(copying bytes: some DataProtocol) {
        storage = SecureBytes(bytes: bytes)
    }

    /// Takes over the contents of `bytes`: they are copied in and `bytes` is zeroed (its count is kept).
    @inlinable public init(zeroing bytes: inout [UInt8]) {
        storage = bytes.withUnsafeBytes { SecureBytes(bytes: $0) }
        bytes.withUnsafeMutableBufferPointer { secureZero($0) }
    }

    /// The number of bytes.
    @inlinable public var count: Int { storage.count }

    /// Calls `body` with the bytes. Do not let the pointer escape, and do not copy the bytes into
    /// storage that is not zeroed.
    @inlinable public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(storage.pointer))
    }

    /// Compares in time that depends only on the lengths.
    public static func == (lhs: SecretBytes, rhs: SecretBytes) -> Bool {
        lhs.withUnsafeBytes { a in rhs.withUnsafeBytes { b in constantTimeEquals(a, b) } }
    }

    /// `SecretBytes(<count> bytes)`: never the bytes.
    public var description: String { "SecretBytes(\(count) bytes)" }
}
