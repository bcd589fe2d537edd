// Poly1305 (RFC 8439 §2.5), byte-identical to libsodium's crypto_onetimeauth_poly1305.
//
// Arithmetic is radix 2^64: the accumulator h = h0 + h1·2^64 + h2·2^128 (h2 a few bits), r = r0 + r1·2^64.
// Clamping clears the low two bits of r1, so h1·r1·2^128 = h1·(r1/4)·2^130 ≡ h1·(5·r1/4) (mod 2^130 − 5):
// with s1 = r1 + r1/4 a block costs six 64×64 multiplies and no data-dependent branches.

import PQCrypto


/// Poly1305 accumulator, key and pending partial block. Secret in its entirety.
struct Poly1305Core {
    var r0: UInt64 = 0, r1: UInt64 = 0, s1: UInt64 = 0
    var h0: UInt64 = 0, h1: UInt64 = 0, h2: UInt64 = 0
    var pad0: UInt64 = 0, pad1: UInt64 = 0
    var buf: (UInt64, UInt64) = (0, 0)     // pending bytes (< 16) of an incomplete block
    var bufCount: Int = 0

    @inline(__always)
    init(key: UnsafeRawPointer) {
        self.init(poly1305LoadLE64(key, 0), poly1305LoadLE64(key, 8), poly1305LoadLE64(key, 16), poly1305LoadLE64(key, 24))
    }

    /// Keys from the four little-endian words of the 32-byte key r ‖ s; r is clamped here.
    @inline(__always)
    init(_ k0: UInt64, _ k1: UInt64, _ k2: UInt64, _ k3: UInt64) {
        r0 = k0 & 0x0fff_fffc_0fff_ffff
        r1 = k1 & 0x0fff_fffc_0fff_fffc
        s1 = r1 &+ (r1 &>> 2)
        pad0 = k2
        pad1 = k3
    }

    /// Absorbs `count` bytes.
    @inline(__always)
    mutating func update(_ data: UnsafeRawPointer, _ count: Int) {
        var p = data
        var n = count
        if bufCount > 0 {
            let take = min(16 - bufCount, n)
            let at = bufCount
            withUnsafeMutableBytes(of: &buf) { b in
                b.baseAddress.map { ($0 + at).copyMemory(from: p, byteCount: take) }
            }
            bufCount += take
            p += take
            n -= take
            if bufCount < 16 { return }
            absorb(UInt64(littleEndian: buf.0), UInt64(littleEndian: buf.1), hibit: 1)
            buf = (0, 0)
            bufCount = 0
        }
        let full = n & ~15
        if full > 0 {
            blocks(p, full &>> 4)
            p += full
            n -= full
        }
        if n > 0 {
            let rest = n
            withUnsafeMutableBytes(of: &buf) { b in
                b.baseAddress.map { $0.copyMemory(from: p, byteCount: rest) }
            }
            bufCount = n
        }
    }

    /// Absorbs `n` full 16-byte blocks (the hot loop: state kept in registers).
    @inline(__always)
    mutating func blocks(_ data: UnsafeRawPointer, _ n: Int) {
        var h0 = self.h0, h1 = self.h1, h2 = self.h2
        let r0 = self.r0, r1 = self.r1, s1 = self.s1
        var p = data
        for _ in 0..<n {
            poly1305Block(&h0, &h1, &h2, r0, r1, s1, poly1305LoadLE64(p, 0), poly1305LoadLE64(p, 8), 1)
            p += 16
        }
        self.h0 = h0; self.h1 = h1; self.h2 = h2
    }

    @inline(__always)
    mutating func absorb(_ m0: UInt64, _ m1: UInt64, hibit: UInt64) {
        poly1305Block(&h0, &h1, &h2, r0, r1, s1, m0, m1, hibit)
    }

    /// Pads and absorbs the pending partial block, reduces fully and writes the 16-byte tag; then zeroes self.
    @inline(__always)
    mutating func finish(into tag: UnsafeMutableRawPointer) {
        if bufCount > 0 {
            // The last block is the remaining bytes, then 0x01, then zeros; no 2^128 bit.
            let at = bufCount
            withUnsafeMutableBytes(of: &buf) { b in
                b.baseAddress.map { $0.storeBytes(of: 1, toByteOffset: at, as: UInt8.self) }
            }
            absorb(UInt64(littleEndian: buf.0), UInt64(littleEndian: buf.1), hibit: 0)
        }
        // Fold bits ≥ 2^130 back in (×5); h is then < 2^130 + small.
        let c = (h2 &>> 2) &* 5
        let (f0, o0) = h0.addingReportingOverflow(c)
        let (f1, o1) = h1.addingReportingOverflow(bit(o0))
        let f2 = (h2 & 3) &+ bit(o1)
        // g = h + 5; if g ≥ 2^130 then h ≥ p and the result is g − 2^130. Select with a mask, not a branch.
        let (g0, o2) = f0.addingReportingOverflow(5)
        let (g1, o3) = f1.addingReportingOverflow(bit(o2))
        let g2 = f2 &+ bit(o3)
        let mask = 0 &- (g2 &>> 2)          // all ones iff g ≥ 2^130
        let r0 = (f0 & ~mask) | (g0 & mask)
        let r1 = (f1 & ~mask) | (g1 & mask)
        // tag = (h + s) mod 2^128
        let (t0, o4) = r0.addingReportingOverflow(pad0)
        let t1 = r1 &+ pad1 &+ bit(o4)
        storeLE64(tag, 0, t0)
        storeLE64(tag, 8, t1)
        wipe()
    }

    @inline(__always)
    mutating func wipe() {
        withUnsafeMutableBytes(of: &self) { raw in
            if let b = raw.baseAddress { secureZero(b, count: raw.count) }
        }
    }
}

/// One block: h = (h + m + hibit·2^128) · r mod (2^130 − 5), partially reduced (h2 stays ≤ 4).
///
/// Carries go through `addc`/`bit` below, never `cond ? 1 : 0` or `||`: those become branches on the
/// (secret) carry bits in LLVM's output, while this form compiles to straight add/adc chains.
@inline(__always)
func poly1305Block(_ h0: inout UInt64, _ h1: inout UInt64, _ h2: inout UInt64,
                       _ r0: UInt64, _ r1: UInt64, _ s1: UInt64,
                       _ m0: UInt64, _ m1: UInt64, _ hibit: UInt64) {
    let (a0, c0) = h0.addingReportingOverflow(m0)
    let (a1, c1) = addc(h1, m1, bit(c0))
    let a2 = h2 &+ hibit &+ c1
    // d0 = a0·r0 + a1·s1, d1 = a0·r1 + a1·r0 + a2·s1, d2 = a2·r0   (a2 ≤ 6, so the last two fit in 64 bits)
    let p00 = a0.multipliedFullWidth(by: r0)
    let p11 = a1.multipliedFullWidth(by: s1)
    let p01 = a0.multipliedFullWidth(by: r1)
    let p10 = a1.multipliedFullWidth(by: r0)
    let q1 = a2 &* s1
    let d2 = a2 &* r0
    let (d0lo, e0) = p00.low.addingReportingOverflow(p11.low)
    let d0hi = p00.high &+ p11.high &+ bit(e0)
    let (x1, e1) = p01.low.addingReportingOverflow(p10.low)
    let (d1lo, e2) = x1.addingReportingOverflow(q1)
    let d1hi = p01.high &+ p10.high &+ bit(e1) &+ bit(e2)
    // h = d0lo + (d0hi + d1lo)·2^64 + (d1hi + d2)·2^128
    let (t1, e3) = d0hi.addingReportingOverflow(d1lo)
    let t2 = d1hi &+ d2 &+ bit(e3)
    // Reduce: the part above 2^130 is (t2 >> 2)·2^130 ≡ 5·(t2 >> 2) = (t2 & ~3) + (t2 >> 2).
    let c = (t2 & ~3) &+ (t2 &>> 2)
    let (n0, f0) = d0lo.addingReportingOverflow(c)
    let (n1, f1) = t1.addingReportingOverflow(bit(f0))
    h0 = n0
    h1 = n1
    h2 = (t2 & 3) &+ bit(f1)
}

/// The overflow flag as 0 or 1, without a select (a `Bool` is one byte holding 0 or 1).
@inline(__always)
fileprivate func bit(_ b: Bool) -> UInt64 { UInt64(unsafeBitCast(b, to: UInt8.self)) }

/// a + b + carry (carry ≤ 1) and the carry out, as a branch-free add/adc pair.
@inline(__always)
private func addc(_ a: UInt64, _ b: UInt64, _ carry: UInt64) -> (UInt64, UInt64) {
    let (s, o1) = a.addingReportingOverflow(b)
    let (t, o2) = s.addingReportingOverflow(carry)
    return (t, bit(o1) | bit(o2))
}

@inline(__always)
func poly1305LoadLE64(_ p: UnsafeRawPointer, _ offset: Int) -> UInt64 {
    UInt64(littleEndian: p.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
}

@inline(__always)
fileprivate func storeLE64(_ p: UnsafeMutableRawPointer, _ offset: Int, _ v: UInt64) {
    p.storeBytes(of: v.littleEndian, toByteOffset: offset, as: UInt64.self)
}

/// Incremental one-time authenticator (crypto_onetimeauth_poly1305_init/update/final).
/// Zeroes its state when finalized and on deinit. Each key must authenticate one message only.
package final class Poly1305 {
    var core: Poly1305Core
    private var finished = false

    /// True once `finalize(into:)` ran (further input is ignored).
    var isFinished: Bool { finished }

    /// Starts a MAC with a 32-byte one-time key (r ‖ s).
    package init(key: UnsafeRawPointer) {
        core = Poly1305Core(key: key)
    }

    /// Absorbs `bytes`. Ignored after `finalize(into:)`.
    package func update(_ bytes: UnsafeRawBufferPointer) {
        guard !finished, let base = bytes.baseAddress, bytes.count > 0 else { return }
        core.update(base, bytes.count)
    }

    /// Writes the 16-byte tag to `tag` and zeroes the state. A second call writes 16 zero bytes.
    package func finalize(into tag: UnsafeMutableRawPointer) {
        guard !finished else {
            tag.initializeMemory(as: UInt8.self, repeating: 0, count: 16)
            return
        }
        finished = true
        core.finish(into: tag)
    }

    deinit {
        core.wipe()
    }
}
