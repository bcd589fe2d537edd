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

/// One NTT or inverse-NTT layer whose butterfly distance (8 or more) spans whole vectors: for each
/// block of 2·`distance` coefficients, `butterfly` with ζ = `zetas[k]` on the pairs `distance`
/// apart, eight at a time; `k` moves by `step` per block.
@inlinable @inline(__always)
func kyberVectorLayer(
    _ r: UnsafeMutablePointer<Int16>, distance: Int, zetas: UnsafeBufferPointer<Int16>, k: inout Int, step: Int,
    _ butterfly: (inout KyberVector, inout KyberVector, KyberVector, KyberVector) -> Void
) {
    var start = 0
    while start < 256 {
        let zeta = KyberVector(repeating: zetas[k])
        let zetaQInverse = KyberVector(repeating: kyberQInverseMultiple(zetas[k]))
        k += step
        var j = start
        while j < start + distance {
            var a = KyberVector.load(r + j), b = KyberVector.load(r + j + distance)
            butterfly(&a, &b, zeta, zetaQInverse)
            a.store(r + j)
            b.store(r + j + distance)
            j += 8
        }
        start += 2 * distance
    }
}

/// The number-theoretic transform (FIPS 203 Algorithm 9), in place, eight coefficients at a time.
/// Input coefficients must be below q in absolute value; output coefficients are Barrett-reduced.
///
/// Layers with butterfly distance ≥ 8 work on whole vectors; the distance-4 and distance-2 layers
/// regroup two vectors into their 64-bit or 32-bit halves so that every lane still does useful work.
@inlinable
func kyberNTT(_ r: UnsafeMutablePointer<Int16>) {
    kyberZetas.withUnsafeBufferPointer { zetas in
        var k = 1
        var length = 128
        while length >= 8 {
            kyberVectorLayer(r, distance: length, zetas: zetas, k: &k, step: 1, kyberButterfly)
            length >>= 1
        }
        // Distance 4 (ζ_32…ζ_63) and distance 2 (ζ_64…ζ_127) on 16 coefficients at a time.
        for block in 0..<16 {
            let p = r + 16 * block
            let v0 = KyberVector.load(p), v1 = KyberVector.load(p + 8)
            // Distance 4: v0 = [a|b] with ζ_k, v1 = [a|b] with ζ_{k+1}.
            var a = KyberVector(quads: SIMD2(v0.quads[0], v1.quads[0]))
            var b = KyberVector(quads: SIMD2(v0.quads[1], v1.quads[1]))
            let z4a = zetas[32 + 2 * block], z4b = zetas[33 + 2 * block]
            let zeta4 = KyberVector(z4a, z4a, z4a, z4a, z4b, z4b, z4b, z4b)
            kyberButterfly(&a, &b, zeta4, zeta4 &* kyberQInverse)
            // Back to memory order: [a0 b0 | a1 b1] = [v0 | v1].
            let w0 = KyberVector(quads: SIMD2(a.quads[0], b.quads[0]))
            let w1 = KyberVector(quads: SIMD2(a.quads[1], b.quads[1]))
            // Distance 2: blocks of four [a a b b], four blocks over w0, w1.
            var c = KyberVector(pairs: SIMD4(w0.pairs[0], w0.pairs[2], w1.pairs[0], w1.pairs[2]))
            var d = KyberVector(pairs: SIMD4(w0.pairs[1], w0.pairs[3], w1.pairs[1], w1.pairs[3]))
            let base = 64 + 4 * block
            let z0 = zetas[base], z1 = zetas[base + 1], z2 = zetas[base + 2], z3 = zetas[base + 3]
            let zeta2 = KyberVector(z0, z0, z1, z1, z2, z2, z3, z3)
            kyberButterfly(&c, &d, zeta2, zeta2 &* kyberQInverse)
            let out0 = KyberVector(pairs: SIMD4(c.pairs[0], d.pairs[0], c.pairs[1], d.pairs[1]))
            let out1 = KyberVector(pairs: SIMD4(c.pairs[2], d.pairs[2], c.pairs[3], d.pairs[3]))
            out0.barrettReduced().store(p)
            out1.barrettReduced().store(p + 8)
        }
    }
}

/// The inverse NTT (FIPS 203 Algorithm 10) followed by multiplication by R, so that a result of
/// ``kyberBaseMultiplyAccumulate`` (which carries a factor R^-1) comes back in the normal domain.
@inlinable
func kyberInverseNTT(_ r: UnsafeMutablePointer<Int16>) {
    let f: Int16 = 1441  // R^2 / 128 mod q
    kyberZetas.withUnsafeBufferPointer { zetas in
        // Distance 2 (ζ_127 down to ζ_64) and distance 4 (ζ_63 down to ζ_32), 16 coefficients at a time.
        for block in 0..<16 {
            let p = r + 16 * block
            let v0 = KyberVector.load(p), v1 = KyberVector.load(p + 8)
            var c = KyberVector(pairs: SIMD4(v0.pairs[0], v0.pairs[2], v1.pairs[0], v1.pairs[2]))
            var d = KyberVector(pairs: SIMD4(v0.pairs[1], v0.pairs[3], v1.pairs[1], v1.pairs[3]))
            // The scalar loop visits blocks of four in order with k = 127, 126, …
            let k2 = 127 - 4 * block
            let z0 = zetas[k2], z1 = zetas[k2 - 1], z2 = zetas[k2 - 2], z3 = zetas[k2 - 3]
            let zeta2 = KyberVector(z0, z0, z1, z1, z2, z2, z3, z3)
            kyberInverseButterfly(&c, &d, zeta2, zeta2 &* kyberQInverse)
            let w0 = KyberVector(pairs: SIMD4(c.pairs[0], d.pairs[0], c.pairs[1], d.pairs[1]))
            let w1 = KyberVector(pairs: SIMD4(c.pairs[2], d.pairs[2], c.pairs[3], d.pairs[3]))
            var a = KyberVector(quads: SIMD2(w0.quads[0], w1.quads[0]))
            var b = KyberVector(quads: SIMD2(w0.quads[1], w1.quads[1]))
            let k4 = 63 - 2 * block
            let z4a = zetas[k4], z4b = zetas[k4 - 1]
            let zeta4 = KyberVector(z4a, z4a, z4a, z4a, z4b, z4b, z4b, z4b)
            kyberInverseButterfly(&a, &b, zeta4, zeta4 &* kyberQInverse)
            KyberVector(quads: SIMD2(a.quads[0], b.quads[0])).store(p)
            KyberVector(quads: SIMD2(a.quads[1], b.quads[1])).store(p + 8)
        }
        var k = 31
        var length = 8
        while length <= 128 {
            kyberVectorLayer(r, distance: length, zetas: zetas, k: &k, step: -1, kyberInverseButterfly)
            length <<= 1
        }
    }
    let factor = KyberVector(repeating: f), factorQInverse = KyberVector(repeating: kyberQInverseMultiple(f))
    var j = 0
    while j < 256 {
        KyberVector.load(r + j).montgomeryMultiplied(by: factor, factorQInverse).store(r + j)
        j += 8
    }
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
