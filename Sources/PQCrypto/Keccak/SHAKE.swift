#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// SHAKE128 (FIPS 202), the extendable-output function with 128-bit security.
///
/// Absorb input with ``update(data:)``, then call ``finalize()`` to get a ``SHAKEReader`` that
/// squeezes as many output bytes as you ask for, in as many calls as you like. The two phases are
/// separate types, so absorbing after squeezing cannot be written.
public struct SHAKE128: Sendable {
    @usableFromInline var sponge = KeccakSponge(rate: 168)

    /// Creates an XOF with nothing absorbed.
    @inlinable public init() {}

    /// Absorbs more input.
    @inlinable public mutating func update(data: some DataProtocol) {
        data.forEachRegion { sponge.absorb($0) }
    }

    /// Absorbs more input from raw memory.
    @inlinable public mutating func update(bufferPointer: UnsafeRawBufferPointer) {
        sponge.absorb(bufferPointer)
    }

    /// Ends absorbing and returns the reader for the output stream.
    @inlinable public consuming func finalize() -> SHAKEReader {
        sponge.finishAbsorbing(domainSuffix: 0x1F)
        return SHAKEReader(sponge: sponge)
    }

    /// Returns the first `outputByteCount` bytes of SHAKE128(`data`).
    @inlinable public static func hash(data: some DataProtocol, outputByteCount: Int) -> [UInt8] {
        var xof = SHAKE128()
        xof.update(data: data)
        var reader = xof.finalize()
        return reader.read(count: outputByteCount)
    }
}

/// SHAKE256 (FIPS 202), the extendable-output function with 256-bit security.
///
/// Absorb input with ``update(data:)``, then call ``finalize()`` to get a ``SHAKEReader``.
public struct SHAKE256: Sendable {
    @usableFromInline var sponge = KeccakSponge(rate: 136)

    /// Creates an XOF with nothing absorbed.
    @inlinable public init() {}

    /// Absorbs more input.
    @inlinable public mutating func update(data: some DataProtocol) {
        data.forEachRegion { sponge.absorb($0) }
    }

    /// Absorbs more input from raw memory.
    @inlinable public mutating func update(bufferPointer: UnsafeRawBufferPointer) {
        sponge.absorb(bufferPointer)
    }

    /// Ends absorbing and returns the reader for the output stream.
    @inlinable public consuming func finalize() -> SHAKEReader {
        sponge.finishAbsorbing(domainSuffix: 0x1F)
        return SHAKEReader(sponge: sponge)
    }

    /// Returns the first `outputByteCount` bytes of SHAKE256(`data`).
    @inlinable public static func hash(data: some DataProtocol, outputByteCount: Int) -> [UInt8] {
        var xof = SHAKE256()
        xof.update(data: data)
        var reader = xof.finalize()
        return reader.read(count: outputByteCount)
    }
}

/// The squeezing phase of a SHAKE XOF: each read continues the output stream where the last stopped.
public struct SHAKEReader: Sendable {
    @usableFromInline var sponge: KeccakSponge

    @inlinable init(sponge: KeccakSponge) {
        self.sponge = sponge
    }

    /// Returns the next `count` output bytes (none for a count of zero or less).
    @inlinable public mutating func read(count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        var output = [UInt8](repeating: 0, count: count)
        output.withUnsafeMutableBytes { sponge.squeeze(into: $0) }
        return output
    }

    /// Fills `buffer` with the next `buffer.count` output bytes.
    @inlinable public mutating func read(into buffer: UnsafeMutableRawBufferPointer) {
        sponge.squeeze(into: buffer)
    }
}
