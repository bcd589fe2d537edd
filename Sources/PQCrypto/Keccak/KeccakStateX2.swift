// Two Keccak-f[1600] states permuted together, one per 64-bit half of a 128-bit vector. Used where
// ML-KEM and ML-DSA need many independent SHAKE streams (matrix expansion, noise sampling): the
// and-not of χ is one vector instruction and each instruction serves two states.

/// Two Keccak states in lock step: lane `i` of state `s` is `lanes[i][s]`.
@usableFromInline
struct KeccakStateX2: Sendable {
    @usableFromInline var lanes: KeccakLanes<SIMD2<UInt64>>

    @inlinable init() {
        lanes = KeccakLanes(repeating: SIMD2(repeating: 0))
    }

    /// Lane `index` of state `state` (0 or 1), read from memory as a scalar: an element of a
    /// SIMD2 with a variable index would otherwise go through a vector register. (`mutating` only
    /// so that the lanes are read in place, not copied first.)
    @inlinable @inline(__always)
    mutating func word(_ index: Int, state: Int) -> UInt64 {
        withUnsafeMutableBytes(of: &lanes) { $0.load(fromByteOffset: 16 &* index &+ 8 &* state, as: UInt64.self) }
    }

    /// XORs `value` into lane `index` of state `state`.
    @inlinable @inline(__always)
    mutating func xorWord(_ index: Int, state: Int, _ value: UInt64) {
        withUnsafeMutableBytes(of: &lanes) { raw in
            let offset = 16 &* index &+ 8 &* state
            raw.storeBytes(of: raw.load(fromByteOffset: offset, as: UInt64.self) ^ value, toByteOffset: offset,
                           as: UInt64.self)
        }
    }

    /// Zeroes every lane of state `state`.
    @inlinable @inline(__always)
    mutating func clear(state: Int) {
        withUnsafeMutableBytes(of: &lanes) { raw in
            for index in 0..<25 { raw.storeBytes(of: 0, toByteOffset: 16 &* index &+ 8 &* state, as: UInt64.self) }
        }
    }

    /// Applies Keccak-f[1600] to both states: each round streams the state from one buffer to
    /// another, as ``KeccakState/permute()`` does (χ's and-not is one vector instruction here, so
    /// no lanes are complemented).
    @inlinable mutating func permute() {
        withUnsafeTemporaryAllocation(of: SIMD2<UInt64>.self, capacity: 25) { scratch in
            guard let other = scratch.baseAddress else { return }
            withUnsafeMutableBytes(of: &lanes) { raw in
                guard let base = raw.baseAddress else { return }
                var input = base.assumingMemoryBound(to: SIMD2<UInt64>.self), output = other
                for round in 0..<24 {
                    Self.round(input, output, roundConstant: SIMD2(repeating: keccakRoundConstant(round)))
                    swap(&input, &output)
                }
            }
        }
    }

    /// One round of both states from `input` to `output` (distinct buffers), one output plane at
    /// a time.
    @inlinable @inline(__always)
    static func round(
        _ input: UnsafeMutablePointer<SIMD2<UInt64>>, _ output: UnsafeMutablePointer<SIMD2<UInt64>>,
        roundConstant: SIMD2<UInt64>
    ) {
        let c0 = input[0] ^ input[5] ^ input[10] ^ input[15] ^ input[20]
        let c1 = input[1] ^ input[6] ^ input[11] ^ input[16] ^ input[21]
        let c2 = input[2] ^ input[7] ^ input[12] ^ input[17] ^ input[22]
        let c3 = input[3] ^ input[8] ^ input[13] ^ input[18] ^ input[23]
        let c4 = input[4] ^ input[9] ^ input[14] ^ input[19] ^ input[24]
        let d0 = c4 ^ rotl2(c1, 1)
        let d1 = c0 ^ rotl2(c2, 1)
        let d2 = c1 ^ rotl2(c3, 1)
        let d3 = c2 ^ rotl2(c4, 1)
        let d4 = c3 ^ rotl2(c0, 1)
        do {
            let b0 = input[0] ^ d0
            let b1 = rotl2(input[6] ^ d1, 44)
            let b2 = rotl2(input[12] ^ d2, 43)
            let b3 = rotl2(input[18] ^ d3, 21)
            let b4 = rotl2(input[24] ^ d4, 14)
            output[0] = b0 ^ (~b1 & b2) ^ roundConstant
            output[1] = b1 ^ (~b2 & b3)
            output[2] = b2 ^ (~b3 & b4)
            output[3] = b3 ^ (~b4 & b0)
            output[4] = b4 ^ (~b0 & b1)
        }
        do {
            let b0 = rotl2(input[3] ^ d3, 28)
            let b1 = rotl2(input[9] ^ d4, 20)
            let b2 = rotl2(input[10] ^ d0, 3)
            let b3 = rotl2(input[16] ^ d1, 45)
            let b4 = rotl2(input[22] ^ d2, 61)
            output[5] = b0 ^ (~b1 & b2)
            output[6] = b1 ^ (~b2 & b3)
            output[7] = b2 ^ (~b3 & b4)
            output[8] = b3 ^ (~b4 & b0)
            output[9] = b4 ^ (~b0 & b1)
        }
        do {
            let b0 = rotl2(input[1] ^ d1, 1)
            let b1 = rotl2(input[7] ^ d2, 6)
            let b2 = rotl2(input[13] ^ d3, 25)
            let b3 = rotl2(input[19] ^ d4, 8)
            let b4 = rotl2(input[20] ^ d0, 18)
            output[10] = b0 ^ (~b1 & b2)
            output[11] = b1 ^ (~b2 & b3)
            output[12] = b2 ^ (~b3 & b4)
            output[13] = b3 ^ (~b4 & b0)
            output[14] = b4 ^ (~b0 & b1)
        }
        do {
            let b0 = rotl2(input[4] ^ d4, 27)
            let b1 = rotl2(input[5] ^ d0, 36)
            let b2 = rotl2(input[11] ^ d1, 10)
            let b3 = rotl2(input[17] ^ d2, 15)
            let b4 = rotl2(input[23] ^ d3, 56)
            output[15] = b0 ^ (~b1 & b2)
            output[16] = b1 ^ (~b2 & b3)
            output[17] = b2 ^ (~b3 & b4)
            output[18] = b3 ^ (~b4 & b0)
            output[19] = b4 ^ (~b0 & b1)
        }
        do {
            let b0 = rotl2(input[2] ^ d2, 62)
            let b1 = rotl2(input[8] ^ d3, 55)
            let b2 = rotl2(input[14] ^ d4, 39)
            let b3 = rotl2(input[15] ^ d0, 41)
            let b4 = rotl2(input[21] ^ d1, 2)
            output[20] = b0 ^ (~b1 & b2)
            output[21] = b1 ^ (~b2 & b3)
            output[22] = b2 ^ (~b3 & b4)
            output[23] = b3 ^ (~b4 & b0)
            output[24] = b4 ^ (~b0 & b1)
        }
    }
}

/// Rotates both lanes left. The halves are joined with `&+` (equal to `|` here, as the bits are
/// disjoint) because LLVM turns the `|` form into a rotate, which x86 lacks for vectors, and then
/// moves the whole permutation to scalar registers.
@inlinable @inline(__always)
func rotl2(_ x: SIMD2<UInt64>, _ n: UInt64) -> SIMD2<UInt64> {
    (x &<< n) &+ (x &>> (64 &- n))
}

/// Two SHAKE sponges (same rate) absorbing short inputs and squeezing whole blocks in lock step.
@usableFromInline
struct KeccakSpongeX2: Sendable {
    @usableFromInline var state = KeccakStateX2()
    /// Rate in bytes, at most 200 (136 for SHAKE256, 168 for SHAKE128).
    @usableFromInline let rate: Int

    /// Absorbs one input per state (each shorter than the rate) and applies the SHAKE padding.
    ///
    /// The permutation that ends absorbing runs in the first ``squeezeBlocks(first:second:blocks:)``:
    /// with no call in here, the state (a tuple, not an `InlineArray`) is built where the caller
    /// keeps the sponge, not in a temporary that is copied afterwards and hides the caller's
    /// constant `rate` from the squeeze loop.
    @inlinable init(rate: Int, first: UnsafeRawBufferPointer, second: UnsafeRawBufferPointer) {
        self.rate = rate
        Self.absorbPadded(&state, lane: 0, first, rate: rate)
        Self.absorbPadded(&state, lane: 1, second, rate: rate)
    }

    @inlinable static func absorbPadded(_ state: inout KeccakStateX2, lane: Int, _ input: UnsafeRawBufferPointer, rate: Int) {
        // Callers pass inputs below the rate (seeds plus a few index bytes): whole lanes first.
        let end = min(input.count, rate - 1)
        var index = 0
        while index + 8 <= end {
            state.xorWord(index >> 3, state: lane,
                          UInt64(littleEndian: input.loadUnaligned(fromByteOffset: index, as: UInt64.self)))
            index += 8
        }
        var tail: UInt64 = 0
        while index < end {
            tail |= UInt64(input[index]) &<< UInt64((index & 7) << 3)
            index += 1
        }
        state.xorWord(end >> 3, state: lane, tail ^ (UInt64(0x1F) &<< UInt64((end & 7) << 3)))
        state.xorWord((rate - 1) >> 3, state: lane, UInt64(0x80) &<< 56)
    }

    /// Writes the next `blocks` output blocks of each state to `first` and `second`, permuting
    /// before each block. The lanes are read in place without a bounds check (`rate` ≤ 200 keeps
    /// them in the state), so the loop has no check left to stop its unrolling for a constant rate.
    @inlinable mutating func squeezeBlocks(first: UnsafeMutableRawPointer, second: UnsafeMutableRawPointer, blocks: Int) {
        for block in 0..<blocks {
            state.permute()
            let offset = block &* rate
            withUnsafeMutableBytes(of: &state.lanes) { raw in
                for lane in 0..<(rate >> 3) {
                    let value = raw.load(fromByteOffset: lane << 4, as: SIMD2<UInt64>.self)
                    first.storeBytes(of: value[0].littleEndian, toByteOffset: offset &+ (lane << 3), as: UInt64.self)
                    second.storeBytes(of: value[1].littleEndian, toByteOffset: offset &+ (lane << 3), as: UInt64.self)
                }
            }
        }
    }

    /// Zeroes both states.
    @inlinable mutating func clear() {
        for i in 0..<25 { state.lanes[i] = SIMD2(repeating: 0) }
    }
}
