// SHA-256 (FIPS 180-4 §6.2), incremental; byte-identical to libsodium's crypto_hash_sha256.
// The 64 rounds are unrolled with the working variables renamed instead of shifted, and the message
// schedule kept as a 16-word ring in locals, so the whole compression runs in registers.

/// Incremental SHA-256 (FIPS 180-4); a value type, so a copy continues independently.
package struct SHA256State {
    /// Digest size in bytes.
    package static let digestByteCount = 32
    /// Block size in bytes.
    package static let blockByteCount = 64

    private var h: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32)
    private var buffer: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)
    private var bufferCount: Int
    private var totalBytes: UInt64   // message length mod 2^64 bytes (the length field is bits, mod 2^64)

    /// Starts an empty hash.
    package init() {
        // FIPS 180-4 §5.3.3: fractional parts of the square roots of the first eight primes.
        h = (0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19)
        buffer = (0, 0, 0, 0, 0, 0, 0, 0)
        bufferCount = 0
        totalBytes = 0
    }

    /// Absorbs `bytes`.
    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard var p = bytes.baseAddress, bytes.count > 0 else { return }
        var n = bytes.count
        totalBytes &+= UInt64(truncatingIfNeeded: n)
        if bufferCount > 0 {
            let take = min(64 - bufferCount, n)
            let at = bufferCount
            withUnsafeMutableBytes(of: &buffer) { b in
                b.baseAddress.map { ($0 + at).copyMemory(from: p, byteCount: take) }
            }
            bufferCount += take
            p += take
            n -= take
            if bufferCount < 64 { return }
            let blockCopy = buffer
            withUnsafeBytes(of: blockCopy) { b in
                b.baseAddress.map { sha256Compress(&h, $0, 1) }
            }
            bufferCount = 0
        }
        let full = n & ~63
        if full > 0 {
            sha256Compress(&h, p, full &>> 6)
            p += full
            n -= full
        }
        if n > 0 {
            let rest = n
            withUnsafeMutableBytes(of: &buffer) { b in
                b.baseAddress.map { $0.copyMemory(from: p, byteCount: rest) }
            }
            bufferCount = rest
        }
    }

    /// Writes the 32-byte digest to `digest` and resets the state to that of a fresh `init()`.
    package mutating func finalize(into digest: UnsafeMutableRawPointer) {
        // Padding: 0x80, zeros to 56 mod 64, then the bit length as a 64-bit big-endian integer.
        let bitLength = totalBytes &<< 3
        var pad: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                  UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let padCount = bufferCount < 56 ? 64 : 128
        let buffered = bufferCount
        let saved = buffer
        withUnsafeMutableBytes(of: &pad) { b in
            guard let base = b.baseAddress else { return }
            withUnsafeBytes(of: saved) { s in
                s.baseAddress.map { base.copyMemory(from: $0, byteCount: buffered) }
            }
            base.storeBytes(of: 0x80, toByteOffset: buffered, as: UInt8.self)
            base.storeBytes(of: bitLength.bigEndian, toByteOffset: padCount - 8, as: UInt64.self)
            sha256Compress(&h, UnsafeRawPointer(base), padCount &>> 6)
        }
        let out = h
        withUnsafeBytes(of: out) { o in
            for i in 0..<8 {
                digest.storeBytes(of: o.load(fromByteOffset: 4 * i, as: UInt32.self).bigEndian,
                                  toByteOffset: 4 * i, as: UInt32.self)
            }
        }
        self = SHA256State()
    }
}

@inline(__always)
private func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x &>> n) | (x &<< (32 &- n)) }

@inline(__always)
private func round(_ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: inout UInt32,
                   _ e: UInt32, _ f: UInt32, _ g: UInt32, _ h: inout UInt32, _ k: UInt32, _ w: UInt32) {
    let s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
    let ch = g ^ (e & (f ^ g))
    let t1 = h &+ s1 &+ ch &+ k &+ w
    let s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
    let maj = (a & b) | (c & (a | b))
    d &+= t1
    h = t1 &+ s0 &+ maj
}

@inline(__always)
private func schedule(_ w: inout UInt32, _ w2: UInt32, _ w7: UInt32, _ w15: UInt32) {
    let sigma1 = rotr(w2, 17) ^ rotr(w2, 19) ^ (w2 &>> 10)
    let sigma0 = rotr(w15, 7) ^ rotr(w15, 18) ^ (w15 &>> 3)
    w = w &+ sigma1 &+ w7 &+ sigma0
}

@inline(__always)
private func loadBE32(_ p: UnsafeRawPointer, _ offset: Int) -> UInt32 {
    UInt32(bigEndian: p.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
}

/// Compresses `blocks` 64-byte blocks at `data` into the chaining value `state`.
private func sha256Compress(_ state: inout (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32),
                            _ data: UnsafeRawPointer, _ blocks: Int) {
    var (s0, s1, s2, s3, s4, s5, s6, s7) = state
    var p = data
    for _ in 0..<blocks {
        var a = s0, b = s1, c = s2, d = s3, e = s4, f = s5, g = s6, h = s7
        var w0 = loadBE32(p, 0), w1 = loadBE32(p, 4), w2 = loadBE32(p, 8), w3 = loadBE32(p, 12)
        var w4 = loadBE32(p, 16), w5 = loadBE32(p, 20), w6 = loadBE32(p, 24), w7 = loadBE32(p, 28)
        var w8 = loadBE32(p, 32), w9 = loadBE32(p, 36), w10 = loadBE32(p, 40), w11 = loadBE32(p, 44)
        var w12 = loadBE32(p, 48), w13 = loadBE32(p, 52), w14 = loadBE32(p, 56), w15 = loadBE32(p, 60)
        round(a, b, c, &d, e, f, g, &h, 0x428a2f98, w0)
        round(h, a, b, &c, d, e, f, &g, 0x71374491, w1)
        round(g, h, a, &b, c, d, e, &f, 0xb5c0fbcf, w2)
        round(f, g, h, &a, b, c, d, &e, 0xe9b5dba5, w3)
        round(e, f, g, &h, a, b, c, &d, 0x3956c25b, w4)
        round(d, e, f, &g, h, a, b, &c, 0x59f111f1, w5)
        round(c, d, e, &f, g, h, a, &b, 0x923f82a4, w6)
        round(b, c, d, &e, f, g, h, &a, 0xab1c5ed5, w7)
        round(a, b, c, &d, e, f, g, &h, 0xd807aa98, w8)
        round(h, a, b, &c, d, e, f, &g, 0x12835b01, w9)
        round(g, h, a, &b, c, d, e, &f, 0x243185be, w10)
        round(f, g, h, &a, b, c, d, &e, 0x550c7dc3, w11)
        round(e, f, g, &h, a, b, c, &d, 0x72be5d74, w12)
        round(d, e, f, &g, h, a, b, &c, 0x80deb1fe, w13)
        round(c, d, e, &f, g, h, a, &b, 0x9bdc06a7, w14)
        round(b, c, d, &e, f, g, h, &a, 0xc19bf174, w15)
        schedule(&w0, w14, w9, w1)
        round(a, b, c, &d, e, f, g, &h, 0xe49b69c1, w0)
        schedule(&w1, w15, w10, w2)
        round(h, a, b, &c, d, e, f, &g, 0xefbe4786, w1)
        schedule(&w2, w0, w11, w3)
        round(g, h, a, &b, c, d, e, &f, 0x0fc19dc6, w2)
        schedule(&w3, w1, w12, w4)
        round(f, g, h, &a, b, c, d, &e, 0x240ca1cc, w3)
        schedule(&w4, w2, w13, w5)
        round(e, f, g, &h, a, b, c, &d, 0x2de92c6f, w4)
        schedule(&w5, w3, w14, w6)
        round(d, e, f, &g, h, a, b, &c, 0x4a7484aa, w5)
        schedule(&w6, w4, w15, w7)
        round(c, d, e, &f, g, h, a, &b, 0x5cb0a9dc, w6)
        schedule(&w7, w5, w0, w8)
        round(b, c, d, &e, f, g, h, &a, 0x76f988da, w7)
        schedule(&w8, w6, w1, w9)
        round(a, b, c, &d, e, f, g, &h, 0x983e5152, w8)
        schedule(&w9, w7, w2, w10)
        round(h, a, b, &c, d, e, f, &g, 0xa831c66d, w9)
        schedule(&w10, w8, w3, w11)
        round(g, h, a, &b, c, d, e, &f, 0xb00327c8, w10)
        schedule(&w11, w9, w4, w12)
        round(f, g, h, &a, b, c, d, &e, 0xbf597fc7, w11)
        schedule(&w12, w10, w5, w13)
        round(e, f, g, &h, a, b, c, &d, 0xc6e00bf3, w12)
        schedule(&w13, w11, w6, w14)
        round(d, e, f, &g, h, a, b, &c, 0xd5a79147, w13)
        schedule(&w14, w12, w7, w15)
        round(c, d, e, &f, g, h, a, &b, 0x06ca6351, w14)
        schedule(&w15, w13, w8, w0)
        round(b, c, d, &e, f, g, h, &a, 0x14292967, w15)
        schedule(&w0, w14, w9, w1)
        round(a, b, c, &d, e, f, g, &h, 0x27b70a85, w0)
        schedule(&w1, w15, w10, w2)
        round(h, a, b, &c, d, e, f, &g, 0x2e1b2138, w1)
        schedule(&w2, w0, w11, w3)
        round(g, h, a, &b, c, d, e, &f, 0x4d2c6dfc, w2)
        schedule(&w3, w1, w12, w4)
        round(f, g, h, &a, b, c, d, &e, 0x53380d13, w3)
        schedule(&w4, w2, w13, w5)
        round(e, f, g, &h, a, b, c, &d, 0x650a7354, w4)
        schedule(&w5, w3, w14, w6)
        round(d, e, f, &g, h, a, b, &c, 0x766a0abb, w5)
        schedule(&w6, w4, w15, w7)
        round(c, d, e, &f, g, h, a, &b, 0x81c2c92e, w6)
        schedule(&w7, w5, w0, w8)
        round(b, c, d, &e, f, g, h, &a, 0x92722c85, w7)
        schedule(&w8, w6, w1, w9)
        round(a, b, c, &d, e, f, g, &h, 0xa2bfe8a1, w8)
        schedule(&w9, w7, w2, w10)
        round(h, a, b, &c, d, e, f, &g, 0xa81a664b, w9)
        schedule(&w10, w8, w3, w11)
        round(g, h, a, &b, c, d, e, &f, 0xc24b8b70, w10)
        schedule(&w11, w9, w4, w12)
        round(f, g, h, &a, b, c, d, &e, 0xc76c51a3, w11)
        schedule(&w12, w10, w5, w13)
        round(e, f, g, &h, a, b, c, &d, 0xd192e819, w12)
        schedule(&w13, w11, w6, w14)
        round(d, e, f, &g, h, a, b, &c, 0xd6990624, w13)
        schedule(&w14, w12, w7, w15)
        round(c, d, e, &f, g, h, a, &b, 0xf40e3585, w14)
        schedule(&w15, w13, w8, w0)
        round(b, c, d, &e, f, g, h, &a, 0x106aa070, w15)
        schedule(&w0, w14, w9, w1)
        round(a, b, c, &d, e, f, g, &h, 0x19a4c116, w0)
        schedule(&w1, w15, w10, w2)
        round(h, a, b, &c, d, e, f, &g, 0x1e376c08, w1)
        schedule(&w2, w0, w11, w3)
        round(g, h, a, &b, c, d, e, &f, 0x2748774c, w2)
        schedule(&w3, w1, w12, w4)
        round(f, g, h, &a, b, c, d, &e, 0x34b0bcb5, w3)
        schedule(&w4, w2, w13, w5)
        round(e, f, g, &h, a, b, c, &d, 0x391c0cb3, w4)
        schedule(&w5, w3, w14, w6)
        round(d, e, f, &g, h, a, b, &c, 0x4ed8aa4a, w5)
        schedule(&w6, w4, w15, w7)
        round(c, d, e, &f, g, h, a, &b, 0x5b9cca4f, w6)
        schedule(&w7, w5, w0, w8)
        round(b, c, d, &e, f, g, h, &a, 0x682e6ff3, w7)
        schedule(&w8, w6, w1, w9)
        round(a, b, c, &d, e, f, g, &h, 0x748f82ee, w8)
        schedule(&w9, w7, w2, w10)
        round(h, a, b, &c, d, e, f, &g, 0x78a5636f, w9)
        schedule(&w10, w8, w3, w11)
        round(g, h, a, &b, c, d, e, &f, 0x84c87814, w10)
        schedule(&w11, w9, w4, w12)
        round(f, g, h, &a, b, c, d, &e, 0x8cc70208, w11)
        schedule(&w12, w10, w5, w13)
        round(e, f, g, &h, a, b, c, &d, 0x90befffa, w12)
        schedule(&w13, w11, w6, w14)
        round(d, e, f, &g, h, a, b, &c, 0xa4506ceb, w13)
        schedule(&w14, w12, w7, w15)
        round(c, d, e, &f, g, h, a, &b, 0xbef9a3f7, w14)
        schedule(&w15, w13, w8, w0)
        round(b, c, d, &e, f, g, h, &a, 0xc67178f2, w15)
        s0 &+= a; s1 &+= b; s2 &+= c; s3 &+= d; s4 &+= e; s5 &+= f; s6 &+= g; s7 &+= h
        p += 64
    }
    state = (s0, s1, s2, s3, s4, s5, s6, s7)
}
