// Arithmetic in Z_q for q = 8380417 (FIPS 204 §7.4, Appendix A).
//
// Coefficients outside the NTT domain are Int32; NTT-domain coefficients are UInt32 residues
// (not always below q; each function states its bounds) multiplied with unsigned Montgomery
// reduction, R = 2^32 (see MLDSANTT.swift). Nothing here divides or uses `%`. Everything that
// touches secret values is branch-free: comparisons become sign masks (`x &>> 31`), so the time
// taken does not depend on the values.

enum MLDSAField {
    static let q = MLDSA65Parameters.q
    static let gamma2 = MLDSA65Parameters.gamma2

    // MARK: NTT-domain (Montgomery) arithmetic

    static let qUnsigned = UInt32(q)
    /// −q^-1 mod 2^32.
    static let negativeQInverse: UInt32 = 4_236_238_847
    /// 2^32 mod q: `montgomeryMultiply(x, rModQ)` is x mod q.
    static let rModQ: UInt32 = 4_193_792
    /// 2^64 mod q: `montgomeryMultiply(x, rSquaredModQ)` undoes one factor 2^-32.
    static let rSquaredModQ: UInt32 = 2_365_951

    /// x·2^-32 mod q, in [0, 2q), for x < 2^32·q. With m = x·(−q^-1) mod 2^32, x + m·q is a
    /// multiple of 2^32 below 2^33·q; its top 32 bits are the result. Products of zero-extended
    /// 32-bit values, as here, are what SSE2's `pmuludq` and NEON's `umull` compute, so the
    /// vectorizer can run these two lanes (or four) at a time.
    @inline(__always)
    static func montgomeryReduce(_ x: UInt64) -> UInt32 {
        let m = UInt32(truncatingIfNeeded: x) &* negativeQInverse
        return UInt32(truncatingIfNeeded: (x &+ UInt64(m) &* UInt64(qUnsigned)) &>> 32)
    }

    /// a·b·2^-32 mod q, in [0, 2q), for a·b < 2^32·q (for instance any a with b < q).
    @inline(__always)
    static func montgomeryMultiply(_ a: UInt32, _ b: UInt32) -> UInt32 {
        montgomeryReduce(UInt64(a) &* UInt64(b))
    }

    /// The representative in [0, q) of a in [0, 2q).
    @inline(__always)
    static func subtractQIfAbove(_ a: UInt32) -> UInt32 {
        let t = a &- qUnsigned
        return t &+ (qUnsigned & (0 &- (t &>> 31)))
    }

    /// The representative in [0, q) of any a.
    @inline(__always)
    static func canonical(_ a: UInt32) -> UInt32 {
        subtractQIfAbove(montgomeryMultiply(a, rModQ))
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
