// Keccak-f[1600], the permutation under SHA-3 and SHAKE (FIPS 202 §3).

/// The 1600-bit Keccak state: 25 little-endian 64-bit lanes, lane `x + 5y` at index `x + 5*y`.
@usableFromInline
struct KeccakState: Sendable {
    @usableFromInline var lanes: InlineArray<25, UInt64>

    @inlinable init() {
        lanes = InlineArray(repeating: 0)
    }

    /// Zeroes every lane (used when a sponge holding secret input is dropped or reset).
    @inlinable mutating func clear() {
        for i in 0..<25 { lanes[i] = 0 }
    }

    /// Applies Keccak-f[1600]: 24 rounds of θ, ρ, π, χ, ι. The lanes live in locals for the whole
    /// permutation so that the optimizer keeps them in registers; the round body is straight-line code
    /// generated from the ρ offsets and π mapping, so there are no table lookups and no branches.
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
        for round in 0..<24 {
            let rc = keccakRoundConstant(round)
            let c0 = a00 ^ a01 ^ a02 ^ a03 ^ a04
            let c1 = a10 ^ a11 ^ a12 ^ a13 ^ a14
            let c2 = a20 ^ a21 ^ a22 ^ a23 ^ a24
            let c3 = a30 ^ a31 ^ a32 ^ a33 ^ a34
            let c4 = a40 ^ a41 ^ a42 ^ a43 ^ a44
            let d0 = c4 ^ rotl(c1, 1)
            let d1 = c0 ^ rotl(c2, 1)
            let d2 = c1 ^ rotl(c3, 1)
            let d3 = c2 ^ rotl(c4, 1)
            let d4 = c3 ^ rotl(c0, 1)
            let b00 = (a00 ^ d0)
            let b13 = rotl(a01 ^ d0, 36)
            let b21 = rotl(a02 ^ d0, 3)
            let b34 = rotl(a03 ^ d0, 41)
            let b42 = rotl(a04 ^ d0, 18)
            let b02 = rotl(a10 ^ d1, 1)
            let b10 = rotl(a11 ^ d1, 44)
            let b23 = rotl(a12 ^ d1, 10)
            let b31 = rotl(a13 ^ d1, 45)
            let b44 = rotl(a14 ^ d1, 2)
            let b04 = rotl(a20 ^ d2, 62)
            let b12 = rotl(a21 ^ d2, 6)
            let b20 = rotl(a22 ^ d2, 43)
            let b33 = rotl(a23 ^ d2, 15)
            let b41 = rotl(a24 ^ d2, 61)
            let b01 = rotl(a30 ^ d3, 28)
            let b14 = rotl(a31 ^ d3, 55)
            let b22 = rotl(a32 ^ d3, 25)
            let b30 = rotl(a33 ^ d3, 21)
            let b43 = rotl(a34 ^ d3, 56)
            let b03 = rotl(a40 ^ d4, 27)
            let b11 = rotl(a41 ^ d4, 20)
            let b24 = rotl(a42 ^ d4, 39)
            let b32 = rotl(a43 ^ d4, 8)
            let b40 = rotl(a44 ^ d4, 14)
            a00 = b00 ^ (~b10 & b20)
            a10 = b10 ^ (~b20 & b30)
            a20 = b20 ^ (~b30 & b40)
            a30 = b30 ^ (~b40 & b00)
            a40 = b40 ^ (~b00 & b10)
            a01 = b01 ^ (~b11 & b21)
            a11 = b11 ^ (~b21 & b31)
            a21 = b21 ^ (~b31 & b41)
            a31 = b31 ^ (~b41 & b01)
            a41 = b41 ^ (~b01 & b11)
            a02 = b02 ^ (~b12 & b22)
            a12 = b12 ^ (~b22 & b32)
            a22 = b22 ^ (~b32 & b42)
            a32 = b32 ^ (~b42 & b02)
            a42 = b42 ^ (~b02 & b12)
            a03 = b03 ^ (~b13 & b23)
            a13 = b13 ^ (~b23 & b33)
            a23 = b23 ^ (~b33 & b43)
            a33 = b33 ^ (~b43 & b03)
            a43 = b43 ^ (~b03 & b13)
            a04 = b04 ^ (~b14 & b24)
            a14 = b14 ^ (~b24 & b34)
            a24 = b24 ^ (~b34 & b44)
            a34 = b34 ^ (~b44 & b04)
            a44 = b44 ^ (~b04 & b14)
            a00 ^= rc

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

@inlinable @inline(__always)
func rotl(_ x: UInt64, _ n: UInt64) -> UInt64 {
    (x &<< n) | (x &>> (64 &- n))
}

/// The ι-step round constants RC[i] (FIPS 202 §3.2.5), as a switch so they compile to an immediate-load
/// table with no global initialisation.
@inlinable @inline(__always)
func keccakRoundConstant(_ round: Int) -> UInt64 {
    switch round {
    case 0: 0x0000_0000_0000_0001
    case 1: 0x0000_0000_0000_8082
    case 2: 0x8000_0000_0000_808A
    case 3: 0x8000_0000_8000_8000
    case 4: 0x0000_0000_0000_808B
    case 5: 0x0000_0000_8000_0001
    case 6: 0x8000_0000_8000_8081
    case 7: 0x8000_0000_0000_8009
    case 8: 0x0000_0000_0000_008A
    case 9: 0x0000_0000_0000_0088
    case 10: 0x0000_0000_8000_8009
    case 11: 0x0000_0000_8000_000A
    case 12: 0x0000_0000_8000_808B
    case 13: 0x8000_0000_0000_008B
    case 14: 0x8000_0000_0000_8089
    case 15: 0x8000_0000_0000_8003
    case 16: 0x8000_0000_0000_8002
    case 17: 0x8000_0000_0000_0080
    case 18: 0x0000_0000_0000_800A
    case 19: 0x8000_0000_8000_000A
    case 20: 0x8000_0000_8000_8081
    case 21: 0x8000_0000_0000_8080
    case 22: 0x0000_0000_8000_0001
    default: 0x8000_0000_8000_8008
    }
}
