// Arithmetic in R_q = Z_q[X]/(X^256 + 1), q = 3329, for ML-KEM (FIPS 203 §4.3).
//
// Coefficients are Int16. Products go through Montgomery reduction (R = 2^16), sums through
// Barrett reduction; neither branches on its input, so secret coefficients leave no timing trace.

@usableFromInline let kyberQ: Int16 = 3329
/// q^-1 mod 2^16, as a signed 16-bit value.
@usableFromInline let kyberQInverse: Int16 = -3327

/// Returns a·R^-1 mod q in (-q, q), for |a| < 2^15·q.
@inlinable @inline(__always)
func kyberMontgomeryReduce(_ a: Int32) -> Int16 {
    let t = Int16(truncatingIfNeeded: a) &* kyberQInverse
    return Int16(truncatingIfNeeded: (a &- Int32(t) &* Int32(kyberQ)) &>> 16)
}

/// Returns the representative of a mod q in {-(q-1)/2, …, (q-1)/2}.
@inlinable @inline(__always)
func kyberBarrettReduce(_ a: Int16) -> Int16 {
    let v: Int32 = 20159  // round(2^26 / q)
    let t = Int16(truncatingIfNeeded: (v &* Int32(a) &+ (1 << 25)) &>> 26)
    return a &- t &* kyberQ
}

/// Montgomery product a·b·R^-1 mod q.
@inlinable @inline(__always)
func kyberMultiply(_ a: Int16, _ b: Int16) -> Int16 {
    kyberMontgomeryReduce(Int32(a) &* Int32(b))
}

/// Maps a representative in (-q, q) to [0, q) without branching.
@inlinable @inline(__always)
func kyberCanonical(_ a: Int16) -> Int16 {
    a &+ ((a &>> 15) & kyberQ)
}

/// ζ^BitRev7(i) · R mod q for ζ = 17, centred: the NTT twiddles in the order the layers use them.
@usableFromInline let kyberZetas: [Int16] = [
    -1044, -758, -359, -1517, 1493, 1422, 287, 202, -171, 622, 1577, 182, 962, -1202, -1474, 1468,
    573, -1325, 264, 383, -829, 1458, -1602, -130, -681, 1017, 732, 608, -1542, 411, -205, -1571,
    1223, 652, -552, 1015, -1293, 1491, -282, -1544, 516, -8, -320, -666, -1618, -1162, 126, 1469,
    -853, -90, -271, 830, 107, -1421, -247, -951, -398, 961, -1508, -725, 448, -1065, 677, -1275,
    -1103, 430, 555, 843, -1251, 871, 1550, 105, 422, 587, 177, -235, -291, -460, 1574, 1653,
    -246, 778, 1159, -147, -777, 1483, -602, 1119, -1590, 644, -872, 349, 418, 329, -156, -75,
    817, 1097, 603, 610, 1322, -1285, -1465, 384, -1215, -136, 1218, -1335, -874, 220, -1187, -1659,
    -1185, -1530, -1278, 794, -1510, -854, -870, 478, -108, -308, 996, 991, 958, -1460, 1522, 1628
]

/// The number-theoretic transform (FIPS 203 Algorithm 9), in place. Input coefficients must be
/// below q in absolute value; output coefficients are Barrett-reduced.
@inlinable
func kyberNTT(_ r: UnsafeMutablePointer<Int16>) {
    kyberZetas.withUnsafeBufferPointer { zetas in
        var k = 1
        var length = 128
        while length >= 2 {
            var start = 0
            while start < 256 {
                let zeta = zetas[k]
                k += 1
                for j in start..<(start + length) {
                    let t = kyberMultiply(zeta, r[j + length])
                    r[j + length] = r[j] &- t
                    r[j] = r[j] &+ t
                }
                start += 2 * length
            }
            length >>= 1
        }
    }
    for i in 0..<256 { r[i] = kyberBarrettReduce(r[i]) }
}

/// The inverse NTT (FIPS 203 Algorithm 10) followed by multiplication by R, so that a result of
/// kyberBaseMultiplyAccumulate (which carries a factor R^-1) comes back in the normal domain.
@inlinable
func kyberInverseNTT(_ r: UnsafeMutablePointer<Int16>) {
    let f: Int16 = 1441  // R^2 / 128 mod q
    kyberZetas.withUnsafeBufferPointer { zetas in
        var k = 127
        var length = 2
        while length <= 128 {
            var start = 0
            while start < 256 {
                let zeta = zetas[k]
                k -= 1
                for j in start..<(start + length) {
                    let t = r[j]
                    r[j] = kyberBarrettReduce(t &+ r[j + length])
                    r[j + length] = kyberMultiply(zeta, r[j + length] &- t)
                }
                start += 2 * length
            }
            length <<= 1
        }
    }
    for i in 0..<256 { r[i] = kyberMultiply(r[i], f) }
}

/// r = Σ_i a_i ∘ b_i for three pairs of NTT-domain polynomials (FIPS 203 Algorithm 11 summed),
/// with one Montgomery reduction per output coefficient (result carries a factor R^-1).
/// Inputs must be below q in absolute value (Barrett-reduced or canonical).
@inlinable
func kyberBaseMultiplyAccumulate(
    _ r: UnsafeMutablePointer<Int16>,
    _ a0: UnsafePointer<Int16>, _ b0: UnsafePointer<Int16>,
    _ a1: UnsafePointer<Int16>, _ b1: UnsafePointer<Int16>,
    _ a2: UnsafePointer<Int16>, _ b2: UnsafePointer<Int16>
) {
    @inline(__always) func pair(_ x: Int, _ gamma: Int16) {
        // Odd·odd products are reduced before the γ multiplication so the sum stays in range.
        let oddProducts = Int32(a0[x + 1]) &* Int32(b0[x + 1])
            &+ Int32(a1[x + 1]) &* Int32(b1[x + 1])
            &+ Int32(a2[x + 1]) &* Int32(b2[x + 1])
        let even = Int32(a0[x]) &* Int32(b0[x]) &+ Int32(a1[x]) &* Int32(b1[x])
            &+ Int32(a2[x]) &* Int32(b2[x])
            &+ Int32(kyberMontgomeryReduce(oddProducts)) &* Int32(gamma)
        let odd = Int32(a0[x]) &* Int32(b0[x + 1]) &+ Int32(a0[x + 1]) &* Int32(b0[x])
            &+ Int32(a1[x]) &* Int32(b1[x + 1]) &+ Int32(a1[x + 1]) &* Int32(b1[x])
            &+ Int32(a2[x]) &* Int32(b2[x + 1]) &+ Int32(a2[x + 1]) &* Int32(b2[x])
        r[x] = kyberMontgomeryReduce(even)
        r[x + 1] = kyberMontgomeryReduce(odd)
    }
    kyberZetas.withUnsafeBufferPointer { zetas in
        for i in 0..<64 {
            let zeta = zetas[64 + i]
            pair(4 * i, zeta)
            pair(4 * i + 2, 0 &- zeta)
        }
    }
}
