// Arithmetic in Z_q for q = 8380417 (FIPS 204 §7.4, Appendix A).
//
// Coefficients outside the NTT domain are Int32; NTT-domain coefficients are integer-valued
// Doubles (see MLDSANTT.swift), reduced by p − round(p/q)·q. Nothing here divides or uses `%`.
// Everything that touches secret values is branch-free: comparisons become sign masks
// (`x &>> 31`), so the time taken does not depend on the values.

enum MLDSAField {
    static let q = MLDSA65Parameters.q
    static let gamma2 = MLDSA65Parameters.gamma2

    // MARK: NTT-domain (Double) arithmetic

    static let qDouble: Double = 8_380_417
    /// The Double nearest 1/q.
    static let qReciprocal: Double = 1.1932580443192743e-07
    /// 1.5·2^52: adding and subtracting it rounds a Double of magnitude below 2^51 to an integer
    /// (round-to-nearest), and the low 32 bits of the sum's bit pattern are that integer.
    static let roundingConstant: Double = 6_755_399_441_055_744

    /// p mod q with |result| ≤ (q+1)/2, for an integer-valued p with |p| < 2^53 (exact, since the
    /// quotient's rounding error is far below 1/2 and k·q is exact).
    @inline(__always)
    static func reduce(_ p: Double) -> Double {
        let k = (p * qReciprocal + roundingConstant) - roundingConstant
        return p - k * qDouble
    }

    /// a·b mod q, reduced, for |a·b| < 2^53.
    @inline(__always)
    static func multiply(_ a: Double, _ b: Double) -> Double {
        reduce(a * b)
    }

    /// An integer-valued Double with |x| < 2^31 as Int32, without a trapping conversion: the low
    /// 32 bits of x + 1.5·2^52 are x in two's complement.
    @inline(__always)
    static func toInt32(_ x: Double) -> Int32 {
        Int32(truncatingIfNeeded: (x + roundingConstant).bitPattern)
    }

    // MARK: Int32 arithmetic

    /// A representative of a mod q in [−6283008, 6283008], for any Int32 a ≤ 2^31 − 2^22.
    @inline(__always)
    static func reduce32(_ a: Int32) -> Int32 {
        let t = (a &+ (1 << 22)) &>> 23
        return a &- t &* q
    }

    /// Adds q to a negative a: maps (−q, q) to [0, q).
    @inline(__always)
    static func addQIfNegative(_ a: Int32) -> Int32 {
        a &+ ((a &>> 31) & q)
    }

    /// The representative of a mod q in [−(q−1)/2, (q−1)/2], for any a with |a| < 2^31 − 2^22.
    @inline(__always)
    static func centered(_ a: Int32) -> Int32 {
        let r = addQIfNegative(reduce32(a))
        return r &- ((((q &- 1) / 2) &- r) &>> 31 & q)
    }

    /// All-ones when |a| ≥ bound, else zero (a must already be centered; bound ≤ (q−1)/2).
    @inline(__always)
    static func exceedsMask(_ a: Int32, _ bound: Int32) -> Int32 {
        let sign = a &>> 31
        let magnitude = (a ^ sign) &- sign
        return (bound &- 1 &- magnitude) &>> 31
    }

    /// Power2Round (FIPS 204 Algorithm 35) for r in [0, q): r = r1·2^13 + r0 with r0 in (−2^12, 2^12].
    @inline(__always)
    static func power2Round(_ r: Int32) -> (high: Int32, low: Int32) {
        let high = (r &+ (1 << 12) &- 1) &>> 13
        return (high, r &- (high &<< 13))
    }

    /// Decompose (FIPS 204 Algorithm 36) for γ2 = (q−1)/32 and r in [0, q): r = r1·2γ2 + r0 with
    /// r0 in (−γ2, γ2], except that the top range r > q − 1 − γ2 gives r1 = 0 and r0 = r − q.
    @inline(__always)
    static func decompose(_ r: Int32) -> (high: Int32, low: Int32) {
        // round(r / 2γ2) without division: 2γ2 = 128 · 4092 and 1025 / 2^22 is 1 / 4092 to within
        // 2^-22, which is exact for every r below q.
        var high = (r &+ 127) &>> 7
        high = (high &* 1025 &+ (1 << 21)) &>> 22
        // r1 = 16 only happens in the top range, which FIPS 204 maps to r1 = 0.
        high &= 15
        var low = r &- high &* (2 &* gamma2)
        // In the top range r1 became 0, so low = r > (q−1)/2: subtract q.
        low &-= (((q &- 1) / 2) &- low) &>> 31 & q
        return (high, low)
    }

    /// MakeHint from the low part a0 = w0 − c·s2 + c·t0 (centered) and the high part w1 of w, as in
    /// the reference implementation: 1 when adding −c·t0 changes the high bits. Branch-free.
    @inline(__always)
    static func makeHint(low a0: Int32, high a1: Int32) -> Int32 {
        let above = (gamma2 &- a0) &>> 31                // a0 > γ2
        let below = (a0 &+ gamma2) &>> 31                // a0 < −γ2
        let atEdge = isZeroMask(a0 &+ gamma2) & ~isZeroMask(a1)  // a0 = −γ2 and a1 ≠ 0
        return (above | below | atEdge) & 1
    }

    /// All-ones when a == 0, else zero.
    @inline(__always)
    static func isZeroMask(_ a: Int32) -> Int32 {
        // (a | −a) has its sign bit set exactly when a ≠ 0.
        ~((a | (0 &- a)) &>> 31)
    }

    /// UseHint (FIPS 204 Algorithm 40) for γ2 = (q−1)/32 and r in [0, q). Runs on public values
    /// only (verification), so it may branch.
    @inline(__always)
    static func useHint(_ hint: Int32, _ r: Int32) -> Int32 {
        let (high, low) = decompose(r)
        if hint == 0 { return high }
        return low > 0 ? (high &+ 1) & 15 : (high &- 1) & 15
    }
}
