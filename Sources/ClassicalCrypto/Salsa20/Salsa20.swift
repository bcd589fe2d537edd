// Salsa20/20 and HSalsa20 (Bernstein, "The Salsa20 family of stream ciphers" and "Extending the Salsa20
// nonce"), byte-identical to libsodium's crypto_stream_salsa20_xor_ic and crypto_core_hsalsa20.
//
// State layout (16 little-endian words): σ0 k0 k1 k2 k3 σ1 n0 n1 t0 t1 σ2 k4 k5 k6 k7 σ3, where t0 t1 is the
// 64-bit block counter. Bulk data goes through a 4-block "vertical" SIMD core: word i of four consecutive
// blocks lives in one SIMD4<UInt32>, so every quarter-round step is plain lane-wise add/rotate/xor.

import PQCrypto


/// Salsa20 family (pure Swift).
package enum Salsa20 {
    /// HSalsa20 of a 32-byte key and 16-byte input into 32 bytes (crypto_core_hsalsa20 with default constant).
    package static func hsalsa20(key: UnsafeRawPointer, input: UnsafeRawPointer, output: UnsafeMutableRawPointer) {
        let w = hsalsa20Words(key: key, input: input)
        storeLE32(output, 0, w.0); storeLE32(output, 4, w.1); storeLE32(output, 8, w.2); storeLE32(output, 12, w.3)
        storeLE32(output, 16, w.4); storeLE32(output, 20, w.5); storeLE32(output, 24, w.6); storeLE32(output, 28, w.7)
    }

    /// HSalsa20 output as eight little-endian words (so XSalsa20 never stores its subkey in memory).
    @inline(__always)
    static func hsalsa20Words(key: UnsafeRawPointer, input: UnsafeRawPointer)
        -> (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) {
        var x0 = sigma0, x5 = sigma1, x10 = sigma2, x15 = sigma3
        var x1 = loadLE32(key, 0), x2 = loadLE32(key, 4), x3 = loadLE32(key, 8), x4 = loadLE32(key, 12)
        var x11 = loadLE32(key, 16), x12 = loadLE32(key, 20), x13 = loadLE32(key, 24), x14 = loadLE32(key, 28)
        var x6 = loadLE32(input, 0), x7 = loadLE32(input, 4), x8 = loadLE32(input, 8), x9 = loadLE32(input, 12)
        for _ in 0..<10 {
            doubleRound(&x0, &x1, &x2, &x3, &x4, &x5, &x6, &x7, &x8, &x9, &x10, &x11, &x12, &x13, &x14, &x15)
        }
        // HSalsa20 outputs the diagonal and the input positions, without the feed-forward.
        return (x0, x5, x10, x15, x6, x7, x8, x9)
    }

    /// XORs `buffer` in place with the Salsa20 keystream for a 32-byte key and 8-byte nonce, starting at
    /// 64-byte block `initialCounter` (== crypto_stream_salsa20_xor_ic).
    ///
    /// The 64-bit block counter wraps modulo 2^64, as libsodium's does.
    package static func xor(_ buffer: UnsafeMutableRawBufferPointer, key: UnsafeRawPointer, nonce: UnsafeRawPointer, initialCounter: UInt64) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        var k = SalsaKey(key: key, nonce: nonce)
        xor(source: UnsafeRawPointer(base), destination: base, count: buffer.count, key: k, counter: initialCounter)
        k.wipe()
    }

    // MARK: - Internal entry points

    /// `destination[i] = source[i] ^ keystream[i]` for `count` bytes starting at block `counter`.
    /// `source` and `destination` must be equal or must not overlap (or `destination < source`).
    static func xor(source: UnsafeRawPointer, destination: UnsafeMutableRawPointer, count: Int,
                    key: SalsaKey, counter: UInt64) {
        var offset = 0
        var ctr = counter
        while count - offset >= 256 {
            xor4Blocks(source + offset, destination + offset, key, ctr)
            offset += 256
            ctr &+= 4
        }
        let rest = count - offset
        guard rest > 0 else { return }
        // Tail: run it through a zero-padded stack block so the bulk cores never read or write out of range.
        var scratch: Scratch256 = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                   0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &scratch) { tmp in
            guard let t = tmp.baseAddress else { return }
            t.copyMemory(from: source + offset, byteCount: rest)
            if rest <= 64 {
                xor1Block(UnsafeRawPointer(t), t, key, ctr)
            } else {
                xor4Blocks(UnsafeRawPointer(t), t, key, ctr)
            }
            (destination + offset).copyMemory(from: UnsafeRawPointer(t), byteCount: rest)
            secureZero(t, count: 256)
        }
    }

    /// Writes the 64-byte keystream block `counter` to `output`.
    static func keystreamBlock(_ output: UnsafeMutableRawPointer, key: SalsaKey, counter: UInt64) {
        // Zero, then XOR in the keystream.
        output.initializeMemory(as: UInt8.self, repeating: 0, count: 64)
        xor1Block(UnsafeRawPointer(output), output, key, counter)
    }
}

/// Key words and nonce of one Salsa20 stream (secret: callers zero it with `wipe()`).
struct SalsaKey {
    var k0: UInt32, k1: UInt32, k2: UInt32, k3: UInt32, k4: UInt32, k5: UInt32, k6: UInt32, k7: UInt32
    var n0: UInt32, n1: UInt32

    @inline(__always)
    init(key: UnsafeRawPointer, nonce: UnsafeRawPointer) {
        k0 = loadLE32(key, 0); k1 = loadLE32(key, 4); k2 = loadLE32(key, 8); k3 = loadLE32(key, 12)
        k4 = loadLE32(key, 16); k5 = loadLE32(key, 20); k6 = loadLE32(key, 24); k7 = loadLE32(key, 28)
        n0 = loadLE32(nonce, 0); n1 = loadLE32(nonce, 4)
    }

    /// XSalsa20: the Salsa20 key HSalsa20(key, nonce[0..<16]) with nonce nonce[16..<24].
    @inline(__always)
    init(xsalsaKey key: UnsafeRawPointer, nonce24: UnsafeRawPointer) {
        (k0, k1, k2, k3, k4, k5, k6, k7) = Salsa20.hsalsa20Words(key: key, input: nonce24)
        n0 = loadLE32(nonce24, 16); n1 = loadLE32(nonce24, 20)
    }

    /// Zeroes the key words in place.
    @inline(__always)
    mutating func wipe() {
        withUnsafeMutableBytes(of: &self) { raw in
            if let b = raw.baseAddress { secureZero(b, count: raw.count) }
        }
    }
}

// 32 × 8 bytes = 256 bytes of stack scratch (a tuple, so no heap allocation).
fileprivate typealias Scratch256 = (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                        UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                        UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                        UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)

// "expand 32-byte k"
private let sigma0: UInt32 = 0x6170_7865
private let sigma1: UInt32 = 0x3320_646e
private let sigma2: UInt32 = 0x7962_2d32
private let sigma3: UInt32 = 0x6b20_6574

@inline(__always)
fileprivate func loadLE32(_ p: UnsafeRawPointer, _ offset: Int) -> UInt32 {
    UInt32(littleEndian: p.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
}

@inline(__always)
fileprivate func storeLE32(_ p: UnsafeMutableRawPointer, _ offset: Int, _ v: UInt32) {
    p.storeBytes(of: v.littleEndian, toByteOffset: offset, as: UInt32.self)
}

// MARK: - Scalar core (one block)

@inline(__always)
private func rotl(_ x: UInt32, _ n: UInt32) -> UInt32 { (x &<< n) | (x &>> (32 &- n)) }

@inline(__always)
private func quarterRound(_ a: inout UInt32, _ b: inout UInt32, _ c: inout UInt32, _ d: inout UInt32) {
    b ^= rotl(a &+ d, 7)
    c ^= rotl(b &+ a, 9)
    d ^= rotl(c &+ b, 13)
    a ^= rotl(d &+ c, 18)
}

@inline(__always)
private func doubleRound(_ x0: inout UInt32, _ x1: inout UInt32, _ x2: inout UInt32, _ x3: inout UInt32,
                         _ x4: inout UInt32, _ x5: inout UInt32, _ x6: inout UInt32, _ x7: inout UInt32,
                         _ x8: inout UInt32, _ x9: inout UInt32, _ x10: inout UInt32, _ x11: inout UInt32,
                         _ x12: inout UInt32, _ x13: inout UInt32, _ x14: inout UInt32, _ x15: inout UInt32) {
    // Column round.
    quarterRound(&x0, &x4, &x8, &x12)
    quarterRound(&x5, &x9, &x13, &x1)
    quarterRound(&x10, &x14, &x2, &x6)
    quarterRound(&x15, &x3, &x7, &x11)
    // Row round.
    quarterRound(&x0, &x1, &x2, &x3)
    quarterRound(&x5, &x6, &x7, &x4)
    quarterRound(&x10, &x11, &x8, &x9)
    quarterRound(&x15, &x12, &x13, &x14)
}

/// XORs 64 bytes from `src` with keystream block `counter` into `dst` (scalar; used for short tails).
private func xor1Block(_ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ k: SalsaKey, _ counter: UInt64) {
    let t0 = UInt32(truncatingIfNeeded: counter), t1 = UInt32(truncatingIfNeeded: counter &>> 32)
    var x0 = sigma0, x1 = k.k0, x2 = k.k1, x3 = k.k2, x4 = k.k3, x5 = sigma1, x6 = k.n0, x7 = k.n1
    var x8 = t0, x9 = t1, x10 = sigma2, x11 = k.k4, x12 = k.k5, x13 = k.k6, x14 = k.k7, x15 = sigma3
    for _ in 0..<10 {
        doubleRound(&x0, &x1, &x2, &x3, &x4, &x5, &x6, &x7, &x8, &x9, &x10, &x11, &x12, &x13, &x14, &x15)
    }
    @inline(__always) func out(_ i: Int, _ v: UInt32) {
        storeLE32(dst, 4 * i, loadLE32(src, 4 * i) ^ v)
    }
    out(0, x0 &+ sigma0); out(1, x1 &+ k.k0); out(2, x2 &+ k.k1); out(3, x3 &+ k.k2)
    out(4, x4 &+ k.k3); out(5, x5 &+ sigma1); out(6, x6 &+ k.n0); out(7, x7 &+ k.n1)
    out(8, x8 &+ t0); out(9, x9 &+ t1); out(10, x10 &+ sigma2); out(11, x11 &+ k.k4)
    out(12, x12 &+ k.k5); out(13, x13 &+ k.k6); out(14, x14 &+ k.k7); out(15, x15 &+ sigma3)
}

// MARK: - SIMD core (four blocks)

fileprivate typealias V = SIMD4<UInt32>

/// `x ^ rotl(t, n)`.
///
/// Written with `&+` instead of `|`: LLVM turns `(t << n) | (t >> (32 - n))` on SIMD4<UInt32> into four
/// scalar `rol` (a funnel shift it costs as too expensive to keep vectorized on SSE2), which made the core
/// ~10× slower. The sum of the two disjoint halves is the same value and stays three vector ops.
@inline(__always)
private func xorRotl(_ x: V, _ t: V, _ n: UInt32) -> V { x ^ ((t &<< n) &+ (t &>> (32 &- n))) }

@inline(__always)
private func quarterRound(_ a: inout V, _ b: inout V, _ c: inout V, _ d: inout V) {
    b = xorRotl(b, a &+ d, 7)
    c = xorRotl(c, b &+ a, 9)
    d = xorRotl(d, c &+ b, 13)
    a = xorRotl(a, d &+ c, 18)
}

@inline(__always)
private func loadV(_ p: UnsafeRawPointer, _ offset: Int) -> V {
    let v = p.loadUnaligned(fromByteOffset: offset, as: V.self)
    #if _endian(big)
    return V(v[0].byteSwapped, v[1].byteSwapped, v[2].byteSwapped, v[3].byteSwapped)
    #else
    return v
    #endif
}

@inline(__always)
private func storeV(_ p: UnsafeMutableRawPointer, _ offset: Int, _ v: V) {
    #if _endian(big)
    p.storeBytes(of: V(v[0].byteSwapped, v[1].byteSwapped, v[2].byteSwapped, v[3].byteSwapped),
                 toByteOffset: offset, as: V.self)
    #else
    p.storeBytes(of: v, toByteOffset: offset, as: V.self)
    #endif
}

/// Transposes four word-vectors (a, b, c, d = words w..w+3 of blocks 0..3) and XORs the 16-byte row of each
/// block into place: block j gets (a[j], b[j], c[j], d[j]) at byte offset 64·j + `rowOffset`.
@inline(__always)
private func xorRows(_ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ rowOffset: Int,
                     _ a: V, _ b: V, _ c: V, _ d: V) {
    // Interleave pairs, then halves: the classic 4×4 transpose in two shuffle stages.
    let ab01 = V(a[0], b[0], a[1], b[1]), ab23 = V(a[2], b[2], a[3], b[3])
    let cd01 = V(c[0], d[0], c[1], d[1]), cd23 = V(c[2], d[2], c[3], d[3])
    let r0 = V(lowHalf: ab01.lowHalf, highHalf: cd01.lowHalf)
    let r1 = V(lowHalf: ab01.highHalf, highHalf: cd01.highHalf)
    let r2 = V(lowHalf: ab23.lowHalf, highHalf: cd23.lowHalf)
    let r3 = V(lowHalf: ab23.highHalf, highHalf: cd23.highHalf)
    storeV(dst, rowOffset, loadV(src, rowOffset) ^ r0)
    storeV(dst, rowOffset + 64, loadV(src, rowOffset + 64) ^ r1)
    storeV(dst, rowOffset + 128, loadV(src, rowOffset + 128) ^ r2)
    storeV(dst, rowOffset + 192, loadV(src, rowOffset + 192) ^ r3)
}

/// The 16 input words of four consecutive blocks (word i of block j in lane j).
private struct State4 {
    var x0: V, x1: V, x2: V, x3: V, x4: V, x5: V, x6: V, x7: V
    var x8: V, x9: V, x10: V, x11: V, x12: V, x13: V, x14: V, x15: V

    @inline(__always)
    init(_ k: SalsaKey, _ counter: UInt64) {
        let c1 = counter &+ 1, c2 = counter &+ 2, c3 = counter &+ 3
        // The 64-bit counter of each lane, split into low and high words (carries across 2^32 per lane).
        x8 = V(UInt32(truncatingIfNeeded: counter), UInt32(truncatingIfNeeded: c1),
               UInt32(truncatingIfNeeded: c2), UInt32(truncatingIfNeeded: c3))
        x9 = V(UInt32(truncatingIfNeeded: counter &>> 32), UInt32(truncatingIfNeeded: c1 &>> 32),
               UInt32(truncatingIfNeeded: c2 &>> 32), UInt32(truncatingIfNeeded: c3 &>> 32))
        x0 = V(repeating: sigma0); x5 = V(repeating: sigma1); x10 = V(repeating: sigma2); x15 = V(repeating: sigma3)
        x1 = V(repeating: k.k0); x2 = V(repeating: k.k1); x3 = V(repeating: k.k2); x4 = V(repeating: k.k3)
        x6 = V(repeating: k.n0); x7 = V(repeating: k.n1)
        x11 = V(repeating: k.k4); x12 = V(repeating: k.k5); x13 = V(repeating: k.k6); x14 = V(repeating: k.k7)
    }

    @inline(__always)
    mutating func doubleRound() {
        quarterRound(&x0, &x4, &x8, &x12)
        quarterRound(&x5, &x9, &x13, &x1)
        quarterRound(&x10, &x14, &x2, &x6)
        quarterRound(&x15, &x3, &x7, &x11)
        quarterRound(&x0, &x1, &x2, &x3)
        quarterRound(&x5, &x6, &x7, &x4)
        quarterRound(&x10, &x11, &x8, &x9)
        quarterRound(&x15, &x12, &x13, &x14)
    }

    /// Adds the input state `i` (feed-forward) and XORs the four keystream blocks into `dst`.
    @inline(__always)
    func output(_ i: State4, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer) {
        xorRows(src, dst, 0, x0 &+ i.x0, x1 &+ i.x1, x2 &+ i.x2, x3 &+ i.x3)
        xorRows(src, dst, 16, x4 &+ i.x4, x5 &+ i.x5, x6 &+ i.x6, x7 &+ i.x7)
        xorRows(src, dst, 32, x8 &+ i.x8, x9 &+ i.x9, x10 &+ i.x10, x11 &+ i.x11)
        xorRows(src, dst, 48, x12 &+ i.x12, x13 &+ i.x13, x14 &+ i.x14, x15 &+ i.x15)
    }
}

/// XORs 256 bytes from `src` with keystream blocks `counter` ..< `counter + 4` into `dst`.
private func xor4Blocks(_ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ k: SalsaKey, _ counter: UInt64) {
    let input = State4(k, counter)
    var x = input
    for _ in 0..<10 { x.doubleRound() }
    x.output(input, src, dst)
}

/// `xor4Blocks` with 16 Poly1305 blocks of `mac` (256 bytes, already final) absorbed in between its rounds.
///
/// Salsa20 keeps the vector units busy and Poly1305 the integer multiplier; interleaving them lets an
/// out-of-order core run both at once instead of one after the other.
@inline(__always)
private func xor4BlocksAbsorbing(_ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ k: SalsaKey, _ counter: UInt64,
                                 _ mac: UnsafeRawPointer, _ h0: inout UInt64, _ h1: inout UInt64, _ h2: inout UInt64,
                                 _ r0: UInt64, _ r1: UInt64, _ s1: UInt64) {
    let input = State4(k, counter)
    var x = input
    var m = mac
    for _ in 0..<8 {
        x.doubleRound()
        poly1305Block(&h0, &h1, &h2, r0, r1, s1, poly1305LoadLE64(m, 0), poly1305LoadLE64(m, 8), 1)
        poly1305Block(&h0, &h1, &h2, r0, r1, s1, poly1305LoadLE64(m, 16), poly1305LoadLE64(m, 24), 1)
        m += 32
    }
    x.doubleRound()
    x.doubleRound()
    x.output(input, src, dst)
}

extension Salsa20 {
    /// Sealing (`sealing: true`): the same result as `xor(buffer, key:nonce:initialCounter:)`
    /// followed by `mac.update(buffer)` (the MAC sees the XORed bytes). Opening: `mac.update(buffer)`
    /// then the XOR (the MAC sees the bytes before it). Either way the two are interleaved so they
    /// run in parallel.
    package static func xorAndAuthenticate(_ buffer: UnsafeMutableRawBufferPointer, key: UnsafeRawPointer, nonce: UnsafeRawPointer,
                                           initialCounter: UInt64, mac: Poly1305, sealing: Bool) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        var k = SalsaKey(key: key, nonce: nonce)
        if mac.isFinished {
            xor(source: UnsafeRawPointer(base), destination: base, count: buffer.count, key: k, counter: initialCounter)
        } else if sealing {
            xorThenAuthenticate(source: UnsafeRawPointer(base), destination: base, count: buffer.count,
                                key: k, counter: initialCounter, mac: &mac.core)
        } else {
            authenticateThenXor(source: UnsafeRawPointer(base), destination: base, count: buffer.count,
                                key: k, counter: initialCounter, mac: &mac.core)
        }
        k.wipe()
    }

    /// MAC-then-decrypt: absorbs `source` into `mac`, then `destination = source ^ keystream` (from block `counter`).
    /// Same overlap rule as `xor(source:destination:count:key:counter:)`.
    static func authenticateThenXor(source: UnsafeRawPointer, destination: UnsafeMutableRawPointer, count: Int,
                                    key: SalsaKey, counter: UInt64, mac: inout Poly1305Core) {
        let units = count / 256
        guard units >= 1, mac.bufCount == 0 else {
            mac.update(source, count)
            xor(source: source, destination: destination, count: count, key: key, counter: counter)
            return
        }
        // Each unit is authenticated (read) inside the rounds, before its output is stored.
        var ctr = counter
        var h0 = mac.h0, h1 = mac.h1, h2 = mac.h2
        let r0 = mac.r0, r1 = mac.r1, s1 = mac.s1
        for u in 0..<units {
            xor4BlocksAbsorbing(source + 256 * u, destination + 256 * u, key, ctr,
                                source + 256 * u, &h0, &h1, &h2, r0, r1, s1)
            ctr &+= 4
        }
        mac.h0 = h0; mac.h1 = h1; mac.h2 = h2
        let done = 256 * units
        if count > done {
            mac.update(source + done, count - done)
            xor(source: source + done, destination: destination + done, count: count - done, key: key, counter: ctr)
        }
    }

    /// Encrypt-then-MAC: `destination = source ^ keystream` (from block `counter`) and absorbs the result into `mac`.
    /// Same overlap rule as `xor(source:destination:count:key:counter:)`.
    static func xorThenAuthenticate(source: UnsafeRawPointer, destination: UnsafeMutableRawPointer, count: Int,
                                    key: SalsaKey, counter: UInt64, mac: inout Poly1305Core) {
        let units = count / 256
        guard units >= 2, mac.bufCount == 0 else {
            xor(source: source, destination: destination, count: count, key: key, counter: counter)
            mac.update(UnsafeRawPointer(destination), count)
            return
        }
        // Unit i is encrypted while unit i − 1 (already ciphertext) is authenticated.
        var ctr = counter
        xor4Blocks(source, destination, key, ctr)
        var h0 = mac.h0, h1 = mac.h1, h2 = mac.h2
        let r0 = mac.r0, r1 = mac.r1, s1 = mac.s1
        for u in 1..<units {
            ctr &+= 4
            xor4BlocksAbsorbing(source + 256 * u, destination + 256 * u, key, ctr,
                                UnsafeRawPointer(destination + 256 * (u - 1)), &h0, &h1, &h2, r0, r1, s1)
        }
        mac.h0 = h0; mac.h1 = h1; mac.h2 = h2
        mac.blocks(UnsafeRawPointer(destination + 256 * (units - 1)), 16)
        let done = 256 * units
        if count > done {
            xor(source: source + done, destination: destination + done, count: count - done, key: key, counter: ctr &+ 4)
            mac.update(UnsafeRawPointer(destination + done), count - done)
        }
    }
}
