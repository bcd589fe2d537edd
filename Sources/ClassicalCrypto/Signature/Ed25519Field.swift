// Arithmetic in GF(2^255 - 19), radix 2^51: five UInt64 limbs, 64x64->128 products via
// multipliedFullWidth. All operations are constant time.
//
// Limb bounds used throughout (checked in the point formulas):
//   "tight": every limb < 2^51 + 2^14      (output of mul, sq, sub, carry, fromBytes)
//   "loose": every limb < 2^52 + 2^15      (sum of two tight values)
// mul/sq accept limbs < 2^54; sub accepts a minuend < 2^54 and a subtrahend that is loose.

import PQCrypto

/// Zeroes any trivial value in place (field elements, points, scalars held in tuples).
@inline(__always)
func edWipe<T>(_ value: inout T) {
    withUnsafeMutableBytes(of: &value) { secureZero($0.baseAddress.unsafelyUnwrapped, count: $0.count) }
}

let edMask51: UInt64 = (1 << 51) - 1

/// A field element sum(v_i * 2^(51 i)), not necessarily reduced.
struct EdFE {
    var v0: UInt64, v1: UInt64, v2: UInt64, v3: UInt64, v4: UInt64

    @inline(__always) init(_ v0: UInt64, _ v1: UInt64, _ v2: UInt64, _ v3: UInt64, _ v4: UInt64) {
        self.v0 = v0; self.v1 = v1; self.v2 = v2; self.v3 = v3; self.v4 = v4
    }

    static let zero = EdFE(0, 0, 0, 0, 0)
    static let one = EdFE(1, 0, 0, 0, 0)
    /// d = -121665/121666
    static let d = EdFE(0x34dca135978a3, 0x1a8283b156ebd, 0x5e7a26001c029, 0x739c663a03cbb, 0x52036cee2b6ff)
    /// 2d
    static let d2 = EdFE(0x69b9426b2f159, 0x35050762add7a, 0x3cf44c0038052, 0x6738cc7407977, 0x2406d9dc56dff)
    /// sqrt(-1) = 2^((p-1)/4)
    static let sqrtM1 = EdFE(0x61b274a0ea0b0, 0xd5a5fc8f189d, 0x7ef5e9cbd0c60, 0x78595a6804c9e, 0x2b8324804fc1d)

    /// Loads 32 little-endian bytes, ignoring the top bit (values in [p, 2^255) stay unreduced,
    /// which the arithmetic tolerates).
    @inline(__always) init(bytes s: UnsafeRawPointer) {
        let w0 = UInt64(littleEndian: s.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
        let w1 = UInt64(littleEndian: s.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        let w2 = UInt64(littleEndian: s.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
        let w3 = UInt64(littleEndian: s.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
        v0 = w0 & edMask51
        v1 = ((w0 >> 51) | (w1 << 13)) & edMask51
        v2 = ((w1 >> 38) | (w2 << 26)) & edMask51
        v3 = ((w2 >> 25) | (w3 << 39)) & edMask51
        v4 = (w3 >> 12) & edMask51
    }

    /// Writes the canonical (fully reduced) 32-byte little-endian encoding.
    @inline(__always) func store(_ out: UnsafeMutableRawPointer) {
        var t = self.carried()
        // t < 2^255 + small; q = 1 iff t >= p.
        var q = (t.v0 &+ 19) >> 51
        q = (t.v1 &+ q) >> 51
        q = (t.v2 &+ q) >> 51
        q = (t.v3 &+ q) >> 51
        q = (t.v4 &+ q) >> 51
        t.v0 &+= 19 &* q
        t.v1 &+= t.v0 >> 51; t.v0 &= edMask51
        t.v2 &+= t.v1 >> 51; t.v1 &= edMask51
        t.v3 &+= t.v2 >> 51; t.v2 &= edMask51
        t.v4 &+= t.v3 >> 51; t.v3 &= edMask51
        t.v4 &= edMask51
        let w0 = t.v0 | (t.v1 << 51)
        let w1 = (t.v1 >> 13) | (t.v2 << 38)
        let w2 = (t.v2 >> 26) | (t.v3 << 25)
        let w3 = (t.v3 >> 39) | (t.v4 << 12)
        out.storeBytes(of: w0.littleEndian, toByteOffset: 0, as: UInt64.self)
        out.storeBytes(of: w1.littleEndian, toByteOffset: 8, as: UInt64.self)
        out.storeBytes(of: w2.littleEndian, toByteOffset: 16, as: UInt64.self)
        out.storeBytes(of: w3.littleEndian, toByteOffset: 24, as: UInt64.self)
    }

    /// One carry pass: output tight.
    @inline(__always) func carried() -> EdFE {
        var r = self
        r.v1 &+= r.v0 >> 51; r.v0 &= edMask51
        r.v2 &+= r.v1 >> 51; r.v1 &= edMask51
        r.v3 &+= r.v2 >> 51; r.v2 &= edMask51
        r.v4 &+= r.v3 >> 51; r.v3 &= edMask51
        r.v0 &+= 19 &* (r.v4 >> 51); r.v4 &= edMask51
        return r
    }

    /// Canonical encoding is all zero.
    @inline(__always) var isZero: Bool {
        var b: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &b) { store($0.baseAddress.unsafelyUnwrapped) }
        return (b.0 | b.1 | b.2 | b.3) == 0
    }

    /// Low bit of the canonical encoding ("negative" in RFC 8032 terms).
    @inline(__always) var isNegative: UInt64 {
        var b: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &b) { store($0.baseAddress.unsafelyUnwrapped) }
        return UInt64(littleEndian: b.0) & 1
    }

    /// Replaces self by `other` when `mask` is all ones; keeps self when zero. No branch.
    @inline(__always) mutating func select(_ other: EdFE, mask: UInt64) {
        v0 ^= (v0 ^ other.v0) & mask
        v1 ^= (v1 ^ other.v1) & mask
        v2 ^= (v2 ^ other.v2) & mask
        v3 ^= (v3 ^ other.v3) & mask
        v4 ^= (v4 ^ other.v4) & mask
    }
}

/// a + b, no carry (tight + tight = loose).
@inline(__always) func + (a: EdFE, b: EdFE) -> EdFE {
    EdFE(a.v0 &+ b.v0, a.v1 &+ b.v1, a.v2 &+ b.v2, a.v3 &+ b.v3, a.v4 &+ b.v4)
}

/// a - b computed as a + 4p - b, then one carry pass (output tight). b must be loose.
@inline(__always) func - (a: EdFE, b: EdFE) -> EdFE {
    // 4p in radix 2^51: limb0 = 4*(2^51 - 19), others 4*(2^51 - 1).
    let p0: UInt64 = 0x1FFFFFFFFFFFB4, pi: UInt64 = 0x1FFFFFFFFFFFFC
    return EdFE(a.v0 &+ p0 &- b.v0, a.v1 &+ pi &- b.v1, a.v2 &+ pi &- b.v2,
              a.v3 &+ pi &- b.v3, a.v4 &+ pi &- b.v4).carried()
}

/// -a (a loose), output tight.
@inline(__always) prefix func - (a: EdFE) -> EdFE { EdFE.zero - a }

/// Accumulates x*y into the 128-bit (hi, lo).
@inline(__always) private func mac(_ hi: inout UInt64, _ lo: inout UInt64, _ x: UInt64, _ y: UInt64) {
    let p = x.multipliedFullWidth(by: y)
    let (s, o) = lo.addingReportingOverflow(p.low)
    lo = s
    hi = hi &+ p.high &+ (o ? 1 : 0)
}

/// Carries the five 128-bit column sums into a tight element.
@inline(__always) private func reduceWide(_ h0: UInt64, _ l0: UInt64, _ h1: UInt64, _ l1: UInt64,
                                          _ h2: UInt64, _ l2: UInt64, _ h3: UInt64, _ l3: UInt64,
                                          _ h4: UInt64, _ l4: UInt64) -> EdFE {
    var h1 = h1, l1 = l1, h2 = h2, l2 = l2, h3 = h3, l3 = l3, h4 = h4, l4 = l4
    var r0 = l0 & edMask51
    var c = (l0 >> 51) | (h0 << 13)
    var o: Bool
    (l1, o) = l1.addingReportingOverflow(c); h1 &+= o ? 1 : 0
    let r1 = l1 & edMask51
    c = (l1 >> 51) | (h1 << 13)
    (l2, o) = l2.addingReportingOverflow(c); h2 &+= o ? 1 : 0
    let r2 = l2 & edMask51
    c = (l2 >> 51) | (h2 << 13)
    (l3, o) = l3.addingReportingOverflow(c); h3 &+= o ? 1 : 0
    let r3 = l3 & edMask51
    c = (l3 >> 51) | (h3 << 13)
    (l4, o) = l4.addingReportingOverflow(c); h4 &+= o ? 1 : 0
    let r4 = l4 & edMask51
    c = (l4 >> 51) | (h4 << 13)
    r0 = r0 &+ c &* 19
    return EdFE(r0 & edMask51, r1 &+ (r0 >> 51), r2, r3, r4)
}

/// a * b (limbs < 2^54), output tight.
@inline(__always) func * (a: EdFE, b: EdFE) -> EdFE {
    let b1 = b.v1 &* 19, b2 = b.v2 &* 19, b3 = b.v3 &* 19, b4 = b.v4 &* 19
    var (h0, l0) = a.v0.multipliedFullWidth(by: b.v0)
    mac(&h0, &l0, a.v1, b4); mac(&h0, &l0, a.v2, b3); mac(&h0, &l0, a.v3, b2); mac(&h0, &l0, a.v4, b1)
    var (h1, l1) = a.v0.multipliedFullWidth(by: b.v1)
    mac(&h1, &l1, a.v1, b.v0); mac(&h1, &l1, a.v2, b4); mac(&h1, &l1, a.v3, b3); mac(&h1, &l1, a.v4, b2)
    var (h2, l2) = a.v0.multipliedFullWidth(by: b.v2)
    mac(&h2, &l2, a.v1, b.v1); mac(&h2, &l2, a.v2, b.v0); mac(&h2, &l2, a.v3, b4); mac(&h2, &l2, a.v4, b3)
    var (h3, l3) = a.v0.multipliedFullWidth(by: b.v3)
    mac(&h3, &l3, a.v1, b.v2); mac(&h3, &l3, a.v2, b.v1); mac(&h3, &l3, a.v3, b.v0); mac(&h3, &l3, a.v4, b4)
    var (h4, l4) = a.v0.multipliedFullWidth(by: b.v4)
    mac(&h4, &l4, a.v1, b.v3); mac(&h4, &l4, a.v2, b.v2); mac(&h4, &l4, a.v3, b.v1); mac(&h4, &l4, a.v4, b.v0)
    return reduceWide(h0, l0, h1, l1, h2, l2, h3, l3, h4, l4)
}

extension EdFE {
    /// self^2 (limbs < 2^54), output tight.
    @inline(__always) func squared() -> EdFE {
        let a0 = v0, a1 = v1, a2 = v2, a3 = v3, a4 = v4
        let d0 = a0 &* 2, d1 = a1 &* 2, d2 = a2 &* 2, d3 = a3 &* 2
        let a3_19 = a3 &* 19, a4_19 = a4 &* 19
        var (h0, l0) = a0.multipliedFullWidth(by: a0)
        mac(&h0, &l0, d1, a4_19); mac(&h0, &l0, d2, a3_19)
        var (h1, l1) = d0.multipliedFullWidth(by: a1)
        mac(&h1, &l1, a3, a3_19); mac(&h1, &l1, d2, a4_19)
        var (h2, l2) = d0.multipliedFullWidth(by: a2)
        mac(&h2, &l2, a1, a1); mac(&h2, &l2, d3, a4_19)
        var (h3, l3) = d0.multipliedFullWidth(by: a3)
        mac(&h3, &l3, d1, a2); mac(&h3, &l3, a4, a4_19)
        var (h4, l4) = d0.multipliedFullWidth(by: a4)
        mac(&h4, &l4, d1, a3); mac(&h4, &l4, a2, a2)
        return reduceWide(h0, l0, h1, l1, h2, l2, h3, l3, h4, l4)
    }

    /// self^(2^n), n >= 1.
    @inline(__always) func squared(times n: Int) -> EdFE {
        var r = self.squared()
        var i = 1
        while i < n { r = r.squared(); i += 1 }
        return r
    }

    /// Returns (self^(2^250 - 1), self^11): the shared prefix of inversion and the square-root power.
    @inline(__always) private func pow2250m1() -> (EdFE, EdFE) {
        let z2 = self.squared()                       // 2
        let z9 = self * z2.squared(times: 2)          // 9
        let z11 = z2 * z9                             // 11
        let z5 = z9 * z11.squared()                   // 2^5 - 1
        let z10 = z5.squared(times: 5) * z5           // 2^10 - 1
        let z20 = z10.squared(times: 10) * z10        // 2^20 - 1
        let z40 = z20.squared(times: 20) * z20        // 2^40 - 1
        let z50 = z40.squared(times: 10) * z10        // 2^50 - 1
        let z100 = z50.squared(times: 50) * z50       // 2^100 - 1
        let z200 = z100.squared(times: 100) * z100    // 2^200 - 1
        let z250 = z200.squared(times: 50) * z50      // 2^250 - 1
        return (z250, z11)
    }

    /// self^(p-2) = 1/self (0 maps to 0). Constant time.
    func inverted() -> EdFE {
        let (z250, z11) = pow2250m1()
        return z250.squared(times: 5) * z11           // 2^255 - 21
    }

    /// self^((p-5)/8) = self^(2^252 - 3), used for square roots.
    func pow22523() -> EdFE {
        let (z250, _) = pow2250m1()
        return z250.squared(times: 2) * self          // 2^252 - 3
    }
}
