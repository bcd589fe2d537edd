#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A secret symmetric key (an ML-KEM shared secret, a post key, a wrap key), shaped like
/// CryptoKit's `SymmetricKey`.
///
/// The bytes live in one heap buffer that is zeroed when the last copy of the key is dropped. Read
/// them with ``withUnsafeBytes(_:)``; equality is constant-time.
public struct SymmetricKey: Sendable, Equatable {
    @usableFromInline let storage: SecureBytes

    /// Creates a key holding a copy of `data`.
    @inlinable public init(data: some DataProtocol) {
        storage = SecureBytes(bytes: data)
    }

    /// Creates a key of `byteCount` bytes from the system's secure random generator.
    public init(randomByteCount byteCount: Int) {
        storage = SecureBytes(count: byteCount) { SystemRandom.fill($0) }
    }

    @usableFromInline init(storage: SecureBytes) {
        self.storage = storage
    }

    /// The key length in bits.
    public var bitCount: Int { storage.count * 8 }

    /// Calls `body` with the key bytes. Do not let the pointer escape.
    @inlinable public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(storage.pointer))
    }

    /// Compares two keys in time that depends only on their lengths.
    public static func == (lhs: SymmetricKey, rhs: SymmetricKey) -> Bool {
        lhs.withUnsafeBytes { a in rhs.withUnsafeBytes { b in constantTimeEquals(a, b) } }
    }
}

/// Compares two byte buffers in time that depends only on their lengths.
@inlinable
public func constantTimeEquals(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for index in 0..<a.count { difference |= a[index] ^ b[index] }
    return difference == 0
}

/// Compares two byte collections in time that depends only on their lengths.
@inlinable
public func constantTimeEquals<A: Collection<UInt8>, B: Collection<UInt8>>(_ a: A, _ b: B) -> Bool {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for (x, y) in zip(a, b) { difference |= x ^ y }
    return difference == 0
}
