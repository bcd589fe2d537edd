import PQCrypto
// Arithmetic modulo L = 2^252 + 27742317777372353535851937790883648493 (the prime order of B).
// Barrett reduction (HAC 14.42) with 64-bit limbs; every routine runs a fixed sequence of
// instructions independent of the values (the nonce and secret scalar pass through here).

/// L, little-endian 64-bit limbs.
private let l0: UInt64 = 0x5812631a5cf5d3ed
private let l1: UInt64 = 0x14def9dea2f79cd6
private let l2: UInt64 = 0
private let l3: UInt64 = 0x1000000000000000

/// mu = floor(2^512 / L), five limbs.
private let mu0: UInt64 = 0xed9ce5a30a2c131b
private let mu1: UInt64 = 0x2106215d086329a7
private let mu2: UInt64 = 0xffffffffffffffeb
private let mu3: UInt64 = 0xffffffffffffffff
private let mu4: UInt64 = 0xf

/// x - y - borrowIn with the borrow out computed by bit logic (no flags turned into branches).
@inline(__always)
private func subBorrow(_ x: UInt64, _ y: UInt64, _ borrowIn: UInt64) -> (UInt64, UInt64) {
    let d = x &- y &- borrowIn
    return (d, ((~x & y) | (~(x ^ y) & d)) >> 63)
}

/// x + y + carryIn with the carry out computed by bit logic.
@inline(__always)
private func addCarry(_ x: UInt64, _ y: UInt64, _ carryIn: UInt64) -> (UInt64, UInt64) {
    let s = x &+ y &+ carryIn
    return (s, ((x & y) | ((x | y) & ~s)) >> 63)
}

/// out[0..<(n+m)] = a[0..<n] * b[0..<m]; out must not alias the inputs.
@inline(__always)
private func mulLimbs(_ a: UnsafePointer<UInt64>, _ n: Int, _ b: UnsafePointer<UInt64>, _ m: Int,
                      _ out: UnsafeMutablePointer<UInt64>) {
    out.initialize(repeating: 0, count: n + m)
    for i in 0..<n {
        var carry: UInt64 = 0
        let ai = a[i]
        for j in 0..<m {
            // hi:lo + carry + out[i+j] < 2^128, so the high word never overflows.
            let p = ai.multipliedFullWidth(by: b[j])
            let (s1, c1) = addCarry(p.low, carry, 0)
            let (s2, c2) = addCarry(s1, out[i + j], 0)
            out[i + j] = s2
            carry = p.high &+ c1 &+ c2
        }
        out[i + m] = carry
    }
}

/// r (5 limbs) -= L when r >= L, by mask.
@inline(__always)
private func condSubtractL(_ r: UnsafeMutablePointer<UInt64>) {
    var t: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)
    var borrow: UInt64 = 0
    (t.0, borrow) = subBorrow(r[0], l0, 0)
    (t.1, borrow) = subBorrow(r[1], l1, borrow)
    (t.2, borrow) = subBorrow(r[2], l2, borrow)
    (t.3, borrow) = subBorrow(r[3], l3, borrow)
    (t.4, borrow) = subBorrow(r[4], 0, borrow)
    let keep = 0 &- borrow          // all ones if r < L (keep r)
    r[0] = (r[0] & keep) | (t.0 & ~keep)
    r[1] = (r[1] & keep) | (t.1 & ~keep)
    r[2] = (r[2] & keep) | (t.2 & ~keep)
    r[3] = (r[3] & keep) | (t.3 & ~keep)
    r[4] = (r[4] & keep) | (t.4 & ~keep)
}

/// x (8 limbs, < 2^512) mod L into out (4 limbs). Uses and wipes a scratch area.
private func barrettReduce(_ x: UnsafePointer<UInt64>, _ out: UnsafeMutablePointer<UInt64>) {
    withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 28) { scratch in
        let s = scratch.baseAddress.unsafelyUnwrapped
        let mu = s             // 5
        let q2 = s + 5         // 10
        let q3l = s + 15       // 9 (q3 * L)
        let lim = s + 24       // 4
        mu[0] = mu0; mu[1] = mu1; mu[2] = mu2; mu[3] = mu3; mu[4] = mu4
        lim[0] = l0; lim[1] = l1; lim[2] = l2; lim[3] = l3
        // q1 = floor(x / 2^192) (5 limbs), q2 = q1 * mu, q3 = floor(q2 / 2^320).
        mulLimbs(x + 3, 5, UnsafePointer(mu), 5, q2)
        // q3 * L (only the low 5 limbs matter).
        mulLimbs(UnsafePointer(q2 + 5), 5, UnsafePointer(lim), 4, q3l)
        // r = (x mod 2^320) - (q3 L mod 2^320), mod 2^320; reuse q2[0..<5] for r.
        let rr = q2
        var borrow: UInt64 = 0
        for i in 0..<5 {
            (rr[i], borrow) = subBorrow(x[i], q3l[i], borrow)
        }
        // 0 <= r < 3L
        condSubtractL(rr)
        condSubtractL(rr)
        out[0] = rr[0]; out[1] = rr[1]; out[2] = rr[2]; out[3] = rr[3]
        secureZero(UnsafeMutableRawPointer(s), count: 28 * 8)
    }
}

@inline(__always)
private func loadLimbs(_ src: UnsafeRawPointer, _ count: Int, _ dst: UnsafeMutablePointer<UInt64>) {
    for i in 0..<count {
        dst[i] = UInt64(littleEndian: src.loadUnaligned(fromByteOffset: i << 3, as: UInt64.self))
    }
}

@inline(__always)
private func storeLimbs(_ src: UnsafePointer<UInt64>, _ count: Int, _ dst: UnsafeMutableRawPointer) {
    for i in 0..<count {
        dst.storeBytes(of: src[i].littleEndian, toByteOffset: i << 3, as: UInt64.self)
    }
}

/// out (32 bytes) = x (64 bytes, little-endian) mod L. Constant time. out may alias x.
func edScalarReduce64(_ x: UnsafeRawPointer, into out: UnsafeMutableRawPointer) {
    withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 12) { buf in
        let b = buf.baseAddress.unsafelyUnwrapped
        loadLimbs(x, 8, b)
        barrettReduce(UnsafePointer(b), b + 8)
        storeLimbs(UnsafePointer(b + 8), 4, out)
        secureZero(UnsafeMutableRawPointer(b), count: 12 * 8)
    }
}

/// out (32 bytes) = (a * b + c) mod L for 32-byte little-endian a, b, c (a, b < 2^256, c < 2^256
/// with a*b + c < 2^512). Constant time. out may alias any input.
func edScalarMulAdd(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ c: UnsafeRawPointer,
              into out: UnsafeMutableRawPointer) {
    withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 24) { buf in
        let p = buf.baseAddress.unsafelyUnwrapped
        let al = p, bl = p + 4, cl = p + 8, prod = p + 12, res = p + 20
        loadLimbs(a, 4, al)
        loadLimbs(b, 4, bl)
        loadLimbs(c, 4, cl)
        mulLimbs(UnsafePointer(al), 4, UnsafePointer(bl), 4, prod)
        var carry: UInt64 = 0
        for i in 0..<8 {
            let addend: UInt64 = i < 4 ? cl[i] : 0
            (prod[i], carry) = addCarry(prod[i], addend, carry)
        }
        barrettReduce(UnsafePointer(prod), res)
        storeLimbs(UnsafePointer(res), 4, out)
        secureZero(UnsafeMutableRawPointer(p), count: 24 * 8)
    }
}

/// s (32 bytes) < L, like libsodium's sc25519_is_canonical. Public data only.
func edScalarIsCanonical(_ s: UnsafeRawPointer) -> Bool {
    let w0 = UInt64(littleEndian: s.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
    let w1 = UInt64(littleEndian: s.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
    let w2 = UInt64(littleEndian: s.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
    let w3 = UInt64(littleEndian: s.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
    // Lexicographic comparison from the most significant limb.
    if w3 != l3 { return w3 < l3 }
    if w2 != l2 { return w2 < l2 }
    if w1 != l1 { return w1 < l1 }
    return w0 < l0
}
