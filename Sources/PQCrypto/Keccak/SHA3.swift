#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// SHA3-256 (FIPS 202): a 32-byte digest.
///
/// Hash in one call with ``hash(data:)``, or incrementally with ``update(data:)`` and ``finalize()``.
public struct SHA3_256: Sendable {
    /// The digest length in bytes.
    public static let byteCount = 32
    @usableFromInline var sponge = KeccakSponge(rate: 136)

    /// Creates a hasher with nothing absorbed.
    @inlinable public init() {}

    /// Absorbs more input.
    @inlinable public mutating func update(data: some DataProtocol) {
        data.forEachRegion { sponge.absorb($0) }
    }

    /// Absorbs more input from raw memory.
    @inlinable public mutating func update(bufferPointer: UnsafeRawBufferPointer) {
        sponge.absorb(bufferPointer)
    }

    /// Returns the digest of everything absorbed.
    @inlinable public consuming func finalize() -> [UInt8] {
        sponge.finishAbsorbing(domainSuffix: 0x06)
        var digest = [UInt8](repeating: 0, count: Self.byteCount)
        digest.withUnsafeMutableBytes { sponge.squeeze(into: $0) }
        return digest
    }

    /// Returns the SHA3-256 digest of `data`.
    @inlinable public static func hash(data: some DataProtocol) -> [UInt8] {
        var hasher = SHA3_256()
        hasher.update(data: data)
        return hasher.finalize()
    }
}

/// SHA3-512 (FIPS 202): a 64-byte digest.
///
/// Hash in one call with ``hash(data:)``, or incrementally with ``update(data:)`` and ``finalize()``.
public struct SHA3_512: Sendable {
    /// The digest length in bytes.
    public static let byteCount = 64
    @usableFromInline var sponge = KeccakSponge(rate: 72)

    /// Creates a hasher with nothing absorbed.
    @inlinable public init() {}

    /// Absorbs more input.
    @inlinable public mutating func update(data: some DataProtocol) {
        data.forEachRegion { sponge.absorb($0) }
    }

    /// Absorbs more input from raw memory.
    @inlinable public mutating func update(bufferPointer: UnsafeRawBufferPointer) {
        sponge.absorb(bufferPointer)
    }

    /// Returns the digest of everything absorbed.
    @inlinable public consuming func finalize() -> [UInt8] {
        sponge.finishAbsorbing(domainSuffix: 0x06)
        var digest = [UInt8](repeating: 0, count: Self.byteCount)
        digest.withUnsafeMutableBytes { sponge.squeeze(into: $0) }
        return digest
    }

    /// Returns the SHA3-512 digest of `data`.
    @inlinable public static func hash(data: some DataProtocol) -> [UInt8] {
        var hasher = SHA3_512()
        hasher.update(data: data)
        return hasher.finalize()
    }
}
