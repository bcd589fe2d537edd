// Two Keccak-f[1600] states permuted together, one per 64-bit half of a 128-bit vector. Used where
// ML-KEM and ML-DSA need many independent SHAKE streams (matrix expansion, noise sampling): the
// and-not of χ is one vector instruction and each instruction serves two states.

/// Two Keccak states in lock step: lane `i` of state `s` is `lanes[i][s]`.
@usableFromInline
struct KeccakStateX2: Sendable {
    @usableFromInline var lanes: InlineArray<25, SIMD2<UInt64>>

    @inlinable init() {
        lanes = InlineArray(repeating: SIMD2(repeating: 0))
    }

    /// Applies Keccak-f[1600] to both states (the same round code as ``KeccakState/permute()``).
    @inlinable mutating func permute() {
        var a00 = lanes[0]
        var a10 = lanes[1]
        var a20 = lanes[2]
        var a30 = lanes[3]
        var a40 = lanes[4]
        var a01 = lanes[5]
        var a11 = lanes[6]
        var a21 = lanes[7]
        var a31 = lanes[8]
        var a41 = lanes[9]
        var a02 = lanes[10]
        var a12 = lanes[11]
        var a22 = lanes[12]
        var a32 = lanes[13]
        var a42 = lanes[14]
        var a03 = lanes[15]
        var a13 = lanes[16]
        var a23 = lanes[17]
        var a33 = lanes[18]
        var a43 = lanes[19]
        var a04 = lanes[20]
        var a14 = lanes[21]
        var a24 = lanes[22]
        var a34 = lanes[23]
        var a44 = lanes[24]
        // Two rounds per iteration: a → e, then e → a, one output plane at a time, so that each
        // lane is consumed right after it is produced and fewer values compete for registers.
        var e00: SIMD2<UInt64>
        var e10: SIMD2<UInt64>
        var e20: SIMD2<UInt64>
        var e30: SIMD2<UInt64>
        var e40: SIMD2<UInt64>
        var e01: SIMD2<UInt64>
        var e11: SIMD2<UInt64>
        var e21: SIMD2<UInt64>
        var e31: SIMD2<UInt64>
        var e41: SIMD2<UInt64>
        var e02: SIMD2<UInt64>
        var e12: SIMD2<UInt64>
        var e22: SIMD2<UInt64>
        var e32: SIMD2<UInt64>
        var e42: SIMD2<UInt64>
        var e03: SIMD2<UInt64>
        var e13: SIMD2<UInt64>
        var e23: SIMD2<UInt64>
        var e33: SIMD2<UInt64>
        var e43: SIMD2<UInt64>
        var e04: SIMD2<UInt64>
        var e14: SIMD2<UInt64>
        var e24: SIMD2<UInt64>
        var e34: SIMD2<UInt64>
        var e44: SIMD2<UInt64>
        var round = 0
        while round < 24 {
            do {
                let c0 = a00 ^ a01 ^ a02 ^ a03 ^ a04
                let c1 = a10 ^ a11 ^ a12 ^ a13 ^ a14
                let c2 = a20 ^ a21 ^ a22 ^ a23 ^ a24
                let c3 = a30 ^ a31 ^ a32 ^ a33 ^ a34
                let c4 = a40 ^ a41 ^ a42 ^ a43 ^ a44
                let d0 = c4 ^ rotl2(c1, 1)
                let d1 = c0 ^ rotl2(c2, 1)
                let d2 = c1 ^ rotl2(c3, 1)
                let d3 = c2 ^ rotl2(c4, 1)
                let d4 = c3 ^ rotl2(c0, 1)
                let b00 = a00 ^ d0
                let b10 = rotl2(a11 ^ d1, 44)
                let b20 = rotl2(a22 ^ d2, 43)
                let b30 = rotl2(a33 ^ d3, 21)
                let b40 = rotl2(a44 ^ d4, 14)
                e00 = b00 ^ (~b10 & b20) ^ SIMD2(repeating: keccakRoundConstant(round))
                e10 = b10 ^ (~b20 & b30)
                e20 = b20 ^ (~b30 & b40)
                e30 = b30 ^ (~b40 & b00)
                e40 = b40 ^ (~b00 & b10)
                let b01 = rotl2(a30 ^ d3, 28)
                let b11 = rotl2(a41 ^ d4, 20)
                let b21 = rotl2(a02 ^ d0, 3)
                let b31 = rotl2(a13 ^ d1, 45)
                let b41 = rotl2(a24 ^ d2, 61)
                e01 = b01 ^ (~b11 & b21)
                e11 = b11 ^ (~b21 & b31)
                e21 = b21 ^ (~b31 & b41)
                e31 = b31 ^ (~b41 & b01)
                e41 = b41 ^ (~b01 & b11)
                let b02 = rotl2(a10 ^ d1, 1)
                let b12 = rotl2(a21 ^ d2, 6)
                let b22 = rotl2(a32 ^ d3, 25)
                let b32 = rotl2(a43 ^ d4, 8)
                let b42 = rotl2(a04 ^ d0, 18)
                e02 = b02 ^ (~b12 & b22)
                e12 = b12 ^ (~b22 & b32)
                e22 = b22 ^ (~b32 & b42)
                e32 = b32 ^ (~b42 & b02)
                e42 = b42 ^ (~b02 & b12)
                let b03 = rotl2(a40 ^ d4, 27)
                let b13 = rotl2(a01 ^ d0, 36)
                let b23 = rotl2(a12 ^ d1, 10)
                let b33 = rotl2(a23 ^ d2, 15)
                let b43 = rotl2(a34 ^ d3, 56)
                e03 = b03 ^ (~b13 & b23)
                e13 = b13 ^ (~b23 & b33)
                e23 = b23 ^ (~b33 & b43)
                e33 = b33 ^ (~b43 & b03)
                e43 = b43 ^ (~b03 & b13)
                let b04 = rotl2(a20 ^ d2, 62)
                let b14 = rotl2(a31 ^ d3, 55)
                let b24 = rotl2(a42 ^ d4, 39)
                let b34 = rotl2(a03 ^ d0, 41)
                let b44 = rotl2(a14 ^ d1, 2)
                e04 = b04 ^ (~b14 & b24)
                e14 = b14 ^ (~b24 & b34)
                e24 = b24 ^ (~b34 & b44)
                e34 = b34 ^ (~b44 & b04)
                e44 = b44 ^ (~b04 & b14)
            }
            do {
                let c0 = e00 ^ e01 ^ e02 ^ e03 ^ e04
                let c1 = e10 ^ e11 ^ e12 ^ e13 ^ e14
                let c2 = e20 ^ e21 ^ e22 ^ e23 ^ e24
                let c3 = e30 ^ e31 ^ e32 ^ e33 ^ e34
                let c4 = e40 ^ e41 ^ e42 ^ e43 ^ e44
                let d0 = c4 ^ rotl2(c1, 1)
                let d1 = c0 ^ rotl2(c2, 1)
                let d2 = c1 ^ rotl2(c3, 1)
                let d3 = c2 ^ rotl2(c4, 1)
                let d4 = c3 ^ rotl2(c0, 1)
                let b00 = e00 ^ d0
                let b10 = rotl2(e11 ^ d1, 44)
                let b20 = rotl2(e22 ^ d2, 43)
                let b30 = rotl2(e33 ^ d3, 21)
                let b40 = rotl2(e44 ^ d4, 14)
                a00 = b00 ^ (~b10 & b20) ^ SIMD2(repeating: keccakRoundConstant(round + 1))
                a10 = b10 ^ (~b20 & b30)
                a20 = b20 ^ (~b30 & b40)
                a30 = b30 ^ (~b40 & b00)
                a40 = b40 ^ (~b00 & b10)
                let b01 = rotl2(e30 ^ d3, 28)
                let b11 = rotl2(e41 ^ d4, 20)
                let b21 = rotl2(e02 ^ d0, 3)
                let b31 = rotl2(e13 ^ d1, 45)
                let b41 = rotl2(e24 ^ d2, 61)
                a01 = b01 ^ (~b11 & b21)
                a11 = b11 ^ (~b21 & b31)
                a21 = b21 ^ (~b31 & b41)
                a31 = b31 ^ (~b41 & b01)
                a41 = b41 ^ (~b01 & b11)
                let b02 = rotl2(e10 ^ d1, 1)
                let b12 = rotl2(e21 ^ d2, 6)
                let b22 = rotl2(e32 ^ d3, 25)
                let b32 = rotl2(e43 ^ d4, 8)
                let b42 = rotl2(e04 ^ d0, 18)
                a02 = b02 ^ (~b12 & b22)
                a12 = b12 ^ (~b22 & b32)
                a22 = b22 ^ (~b32 & b42)
                a32 = b32 ^ (~b42 & b02)
                a42 = b42 ^ (~b02 & b12)
                let b03 = rotl2(e40 ^ d4, 27)
                let b13 = rotl2(e01 ^ d0, 36)
                let b23 = rotl2(e12 ^ d1, 10)
                let b33 = rotl2(e23 ^ d2, 15)
                let b43 = rotl2(e34 ^ d3, 56)
                a03 = b03 ^ (~b13 & b23)
                a13 = b13 ^ (~b23 & b33)
                a23 = b23 ^ (~b33 & b43)
                a33 = b33 ^ (~b43 & b03)
                a43 = b43 ^ (~b03 & b13)
                let b04 = rotl2(e20 ^ d2, 62)
                let b14 = rotl2(e31 ^ d3, 55)
                let b24 = rotl2(e42 ^ d4, 39)
                let b34 = rotl2(e03 ^ d0, 41)
                let b44 = rotl2(e14 ^ d1, 2)
                a04 = b04 ^ (~b14 & b24)
                a14 = b14 ^ (~b24 & b34)
                a24 = b24 ^ (~b34 & b44)
                a34 = b34 ^ (~b44 & b04)
                a44 = b44 ^ (~b04 & b14)
            }
            round += 2
        }
        lanes[0] = a00
        lanes[1] = a10
        lanes[2] = a20
        lanes[3] = a30
        lanes[4] = a40
        lanes[5] = a01
        lanes[6] = a11
        lanes[7] = a21
        lanes[8] = a31
        lanes[9] = a41
        lanes[10] = a02
        lanes[11] = a12
        lanes[12] = a22
        lanes[13] = a32
        lanes[14] = a42
        lanes[15] = a03
        lanes[16] = a13
        lanes[17] = a23
        lanes[18] = a33
        lanes[19] = a43
        lanes[20] = a04
        lanes[21] = a14
        lanes[22] = a24
        lanes[23] = a34
        lanes[24] = a44
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
    @usableFromInline let rate: Int
    @usableFromInline var squeezedFirstBlock = false

    /// Absorbs one input per state (each shorter than the rate) and applies the SHAKE padding.
    @inlinable init(rate: Int, first: UnsafeRawBufferPointer, second: UnsafeRawBufferPointer) {
        self.rate = rate
        Self.absorbPadded(&state, lane: 0, first, rate: rate)
        Self.absorbPadded(&state, lane: 1, second, rate: rate)
        state.permute()
    }

    @inlinable static func absorbPadded(_ state: inout KeccakStateX2, lane: Int, _ input: UnsafeRawBufferPointer, rate: Int) {
        // Callers pass inputs below the rate (seeds plus a few index bytes): whole lanes first.
        let end = min(input.count, rate - 1)
        var index = 0
        while index + 8 <= end {
            state.lanes[index >> 3][lane] ^= UInt64(littleEndian: input.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            index += 8
        }
        while index < end {
            state.lanes[index >> 3][lane] ^= UInt64(input[index]) &<< UInt64((index & 7) << 3)
            index += 1
        }
        state.lanes[end >> 3][lane] ^= UInt64(0x1F) &<< UInt64((end & 7) << 3)
        state.lanes[(rate - 1) >> 3][lane] ^= UInt64(0x80) &<< 56
    }

    /// Writes the next `blocks` output blocks of each state to `first` and `second`.
    @inlinable mutating func squeezeBlocks(first: UnsafeMutableRawPointer, second: UnsafeMutableRawPointer, blocks: Int) {
        for block in 0..<blocks {
            if squeezedFirstBlock { state.permute() }
            squeezedFirstBlock = true
            let offset = block * rate
            for lane in 0..<(rate >> 3) {
                let value = state.lanes[lane]
                first.storeBytes(of: value[0].littleEndian, toByteOffset: offset + (lane << 3), as: UInt64.self)
                second.storeBytes(of: value[1].littleEndian, toByteOffset: offset + (lane << 3), as: UInt64.self)
            }
        }
    }

    /// Zeroes both states.
    @inlinable mutating func clear() {
        for i in 0..<25 { state.lanes[i] = SIMD2(repeating: 0) }
    }
}
