// Keccak-f[1600], the permutation under SHA-3 and SHAKE (FIPS 202 §3).

/// The 1600-bit Keccak state: 25 little-endian 64-bit lanes, lane `x + 5y` at index `x + 5*y`.
@usableFromInline
struct KeccakState: Sendable {
    @usableFromInline var lanes: KeccakLanes<UInt64>

    @inlinable init() {
        lanes = KeccakLanes(repeating: 0)
    }

    /// Zeroes every lane (used when a sponge holding secret input is dropped or reset).
    @inlinable mutating func clear() {
        for i in 0..<25 { lanes[i] = 0 }
    }

    /// Applies Keccak-f[1600]: 24 rounds of θ, ρ, π, χ, ι.
    ///
    /// Each round reads one copy of the state from memory and writes the next into another (the
    /// lanes and a scratch copy, alternately; 24 is even, so the result ends in `lanes`), as the
    /// Keccak team's XKCP does: the 25 lanes and θ's column sums do not fit x86-64's 16 registers,
    /// and streaming them through memory costs fewer loads and stores than the spills an
    /// all-register formulation gets. The lanes are held complemented at positions 1, 2, 8, 12,
    /// 17 and 20 during the rounds ("lane complementing"), so χ needs 5 NOTs per round instead of
    /// 25. Straight-line rounds, no secret-dependent branches or indices.
    @inlinable mutating func permute() {
        withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 25) { scratch in
            guard let other = scratch.baseAddress else { return }
            withUnsafeMutableBytes(of: &lanes) { raw in
                guard let base = raw.baseAddress else { return }
                let state = base.assumingMemoryBound(to: UInt64.self)
                Self.complementLanes(state)
                var input = state, output = other
                for round in 0..<24 {
                    Self.round(input, output, roundConstant: keccakRoundConstant(round))
                    swap(&input, &output)
                }
                Self.complementLanes(state)
            }
        }
    }

    /// Complements the lanes that lane complementing keeps inverted (an involution).
    @inlinable @inline(__always)
    static func complementLanes(_ state: UnsafeMutablePointer<UInt64>) {
        state[1] = ~state[1]
        state[2] = ~state[2]
        state[8] = ~state[8]
        state[12] = ~state[12]
        state[17] = ~state[17]
        state[20] = ~state[20]
    }

    /// One round on a lane-complemented state, from `input` to `output` (distinct buffers), with
    /// χ in XKCP's lane-complementing form, one output plane at a time.
    @inlinable @inline(__always)
    static func round(_ input: UnsafeMutablePointer<UInt64>, _ output: UnsafeMutablePointer<UInt64>, roundConstant: UInt64) {
        let c0 = input[0] ^ input[5] ^ input[10] ^ input[15] ^ input[20]
        let c1 = input[1] ^ input[6] ^ input[11] ^ input[16] ^ input[21]
        let c2 = input[2] ^ input[7] ^ input[12] ^ input[17] ^ input[22]
        let c3 = input[3] ^ input[8] ^ input[13] ^ input[18] ^ input[23]
        let c4 = input[4] ^ input[9] ^ input[14] ^ input[19] ^ input[24]
        let d0 = c4 ^ rotl(c1, 1)
        let d1 = c0 ^ rotl(c2, 1)
        let d2 = c1 ^ rotl(c3, 1)
        let d3 = c2 ^ rotl(c4, 1)
        let d4 = c3 ^ rotl(c0, 1)
        do {
            let b0 = input[0] ^ d0
            let b1 = rotl(input[6] ^ d1, 44)
            let b2 = rotl(input[12] ^ d2, 43)
            let b3 = rotl(input[18] ^ d3, 21)
            let b4 = rotl(input[24] ^ d4, 14)
            output[0] = b0 ^ (b1 | b2) ^ roundConstant
            output[1] = b1 ^ (~b2 | b3)
            output[2] = b2 ^ (b3 & b4)
            output[3] = b3 ^ (b4 | b0)
            output[4] = b4 ^ (b0 & b1)
        }
        do {
            let b0 = rotl(input[3] ^ d3, 28)
            let b1 = rotl(input[9] ^ d4, 20)
            let b2 = rotl(input[10] ^ d0, 3)
            let b3 = rotl(input[16] ^ d1, 45)
            let b4 = rotl(input[22] ^ d2, 61)
            output[5] = b0 ^ (b1 | b2)
            output[6] = b1 ^ (b2 & b3)
            output[7] = b2 ^ (b3 | ~b4)
            output[8] = b3 ^ (b4 | b0)
            output[9] = b4 ^ (b0 & b1)
        }
        do {
            let b0 = rotl(input[1] ^ d1, 1)
            let b1 = rotl(input[7] ^ d2, 6)
            let b2 = rotl(input[13] ^ d3, 25)
            let b3 = rotl(input[19] ^ d4, 8)
            let b4 = rotl(input[20] ^ d0, 18)
            let nb3 = ~b3
            output[10] = b0 ^ (b1 | b2)
            output[11] = b1 ^ (b2 & b3)
            output[12] = b2 ^ (nb3 & b4)
            output[13] = nb3 ^ (b4 | b0)
            output[14] = b4 ^ (b0 & b1)
        }
        do {
            let b0 = rotl(input[4] ^ d4, 27)
            let b1 = rotl(input[5] ^ d0, 36)
            let b2 = rotl(input[11] ^ d1, 10)
            let b3 = rotl(input[17] ^ d2, 15)
            let b4 = rotl(input[23] ^ d3, 56)
            let nb3 = ~b3
            output[15] = b0 ^ (b1 & b2)
            output[16] = b1 ^ (b2 | b3)
            output[17] = b2 ^ (nb3 | b4)
            output[18] = nb3 ^ (b4 & b0)
            output[19] = b4 ^ (b0 | b1)
        }
        do {
            let b0 = rotl(input[2] ^ d2, 62)
            let b1 = rotl(input[8] ^ d3, 55)
            let b2 = rotl(input[14] ^ d4, 39)
            let b3 = rotl(input[15] ^ d0, 41)
            let b4 = rotl(input[21] ^ d1, 2)
            let nb1 = ~b1
            output[20] = b0 ^ (nb1 & b2)
            output[21] = nb1 ^ (b2 | b3)
            output[22] = b2 ^ (b3 & b4)
            output[23] = b3 ^ (b4 | b0)
            output[24] = b4 ^ (b0 & b1)
        }
    }
}

/// 25 lanes stored in place, one after another: the layout of `InlineArray<25, Lane>`.
@usableFromInline
struct KeccakLanes<Lane: Sendable>: InlineElements, Sendable {
    @usableFromInline typealias Element = Lane

    @usableFromInline var storage: (
        Lane, Lane, Lane, Lane, Lane,
        Lane, Lane, Lane, Lane, Lane,
        Lane, Lane, Lane, Lane, Lane,
        Lane, Lane, Lane, Lane, Lane,
        Lane, Lane, Lane, Lane, Lane
    )

    @inlinable init(repeating value: Lane) {
        storage = (
            value, value, value, value, value,
            value, value, value, value, value,
            value, value, value, value, value,
            value, value, value, value, value,
            value, value, value, value, value
        )
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
