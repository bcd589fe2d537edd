#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PQCrypto

/// Zeroing and constant-time comparison of secret bytes.
///
/// Use these for secrets that are not held in a `SymmetricKey` (which zeroes itself and compares
/// in constant time already): scratch buffers, decrypted plaintext, MAC tags.
public enum SecureMemory {
    /// Overwrites `buffer` with zeros in a way the compiler may not remove (`explicit_bzero` on
    /// Linux, `memset_s` on Apple platforms).
    public static func zero(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        secureZero(base, count: buffer.count)
    }

    /// Overwrites the bytes of `bytes` with zeros, keeping its count.
    ///
    /// Zeroes the array's own storage; copies that share no storage with it are not affected.
    public static func zero(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { zero($0) }
    }

    /// Returns whether `a` and `b` hold the same bytes, in time that depends only on their lengths
    /// (every byte pair is compared; differences are collected without branching). Use it for tags, digests and other values an attacker must not learn
    /// byte by byte.
    public static func constantTimeEquals(_ a: some DataProtocol, _ b: some DataProtocol) -> Bool {
        guard a.count == b.count else { return false }
        return withContiguousBytes(of: a) { left in
            withContiguousBytes(of: b) { right in constantTimeEquals(left, right) }
        }
    }

    /// Returns whether two buffers hold the same bytes, in time that depends only on their lengths.
    public static func constantTimeEquals(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        return PQCrypto.constantTimeEquals(a, b)
    }
}
