// The sponge construction over Keccak-f[1600] (FIPS 202 §4), shared by SHA-3 and SHAKE.

/// A Keccak sponge with a byte-granular absorb and squeeze position.
///
/// The sponge is a value type: copying it forks the hash computation, which the ML-KEM and ML-DSA
/// code uses to reuse an absorbed prefix.
@usableFromInline
struct KeccakSponge: Sendable {
    @usableFromInline var state = KeccakState()
    /// Rate in bytes (136 for SHA3-256/SHAKE256, 72 for SHA3-512, 168 for SHAKE128).
    @usableFromInline let rate: Int
    /// Bytes absorbed into, or squeezed from, the current block.
    @usableFromInline var offset = 0

    @inlinable init(rate: Int) {
        self.rate = rate
    }

    /// XORs `bytes` into the state, permuting after every full block.
    @inlinable mutating func absorb(_ bytes: UnsafeRawBufferPointer) {
        var position = 0
        let count = bytes.count
        // Finish a partly filled block byte by byte.
        while offset & 7 != 0 && position < count {
            xorByte(bytes[position], at: offset)
            offset += 1
            position += 1
            if offset == rate { state.permute(); offset = 0 }
        }
        // Whole lanes at a time.
        while count - position >= 8 {
            let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt64.self))
            state.lanes[offset >> 3] ^= word
            offset += 8
            position += 8
            if offset == rate { state.permute(); offset = 0 }
        }
        while position < count {
            xorByte(bytes[position], at: offset)
            offset += 1
            position += 1
            if offset == rate { state.permute(); offset = 0 }
        }
    }

    @inlinable mutating func absorb(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { absorb($0) }
    }

    @inlinable @inline(__always)
    mutating func xorByte(_ byte: UInt8, at index: Int) {
        state.lanes[index >> 3] ^= UInt64(byte) &<< UInt64((index & 7) << 3)
    }

    /// Ends absorbing: appends the domain-separation suffix and the pad10*1 padding, permutes, and
    /// leaves the sponge ready to squeeze from the start of the first output block.
    @inlinable mutating func finishAbsorbing(domainSuffix: UInt8) {
        xorByte(domainSuffix, at: offset)
        xorByte(0x80, at: rate - 1)
        state.permute()
        offset = 0
    }

    /// Writes the next `output.count` bytes of the sponge's output.
    @inlinable mutating func squeeze(into output: UnsafeMutableRawBufferPointer) {
        var position = 0
        let count = output.count
        while position < count {
            if offset == rate { state.permute(); offset = 0 }
            if offset & 7 == 0 && count - position >= 8 && offset + 8 <= rate {
                output.storeBytes(of: state.lanes[offset >> 3].littleEndian, toByteOffset: position, as: UInt64.self)
                offset += 8
                position += 8
            } else {
                output[position] = UInt8(truncatingIfNeeded: state.lanes[offset >> 3] &>> UInt64((offset & 7) << 3))
                offset += 1
                position += 1
            }
        }
    }

    /// Squeezes whole blocks: `blocks * rate` bytes, for the samplers that read a block at a time.
    /// Requires the squeeze position to be at a block boundary (offset 0 right after
    /// `finishAbsorbing`, or `rate` after a previous whole-block squeeze).
    @inlinable mutating func squeezeBlocks(into output: UnsafeMutableRawPointer, blocks: Int) {
        var out = output
        for _ in 0..<blocks {
            if offset == rate { state.permute() }
            for lane in 0..<(rate >> 3) {
                out.storeBytes(of: state.lanes[lane].littleEndian, toByteOffset: lane << 3, as: UInt64.self)
            }
            offset = rate
            out += rate
        }
    }

    /// Zeroes the state (for sponges that absorbed secret material).
    @inlinable mutating func clear() {
        state.clear()
        offset = 0
    }
}
