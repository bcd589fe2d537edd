import PQCrypto
// SHA-512 (FIPS 180-4), incremental. Pure Swift, standard library only.

/// Incremental SHA-512 state (FIPS 180-4), byte-identical to libsodium's `crypto_hash_sha512`.
///
/// `finalize(into:)` wipes the internal state (chaining value and buffered input) because Ed25519
/// feeds secret key material through it; call `init()` again to hash another message.
package struct SHA512State {
    /// Chaining value H0...H7.
    private var h: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)
    /// One 128-byte block of buffered, not yet compressed input.
    private var block: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                        UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)
    /// Bytes currently held in `block` (0..<128).
    private var buffered: Int
    /// Total message length in bytes; 64 bits so inputs beyond 4 GiB never overflow.
    private var byteCount: UInt64

    /// A fresh state with the SHA-512 initial hash value.
    package init() {
        h = (0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b, 0xa54ff53a5f1d36f1,
             0x510e527fade682d1, 0x9b05688c2b3e6c1f, 0x1f83d9abfb41bd6b, 0x5be0cd19137e2179)
        block = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        buffered = 0
        byteCount = 0
    }

    /// Absorbs `bytes` (any length, including empty).
    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        var src = base
        var remaining = bytes.count
        byteCount &+= UInt64(truncatingIfNeeded: remaining)
        var fill = buffered
        withUnsafeMutableBytes(of: &h) { hRaw in
            let hp = hRaw.baseAddress.unsafelyUnwrapped.assumingMemoryBound(to: UInt64.self)
            withUnsafeMutableBytes(of: &block) { bRaw in
                let bp = bRaw.baseAddress.unsafelyUnwrapped
                if fill > 0 {
                    // Top up the partial block first.
                    let take = min(128 - fill, remaining)
                    (bp + fill).copyMemory(from: src, byteCount: take)
                    fill += take
                    src += take
                    remaining -= take
                    if fill < 128 { return }
                    sha512Compress(hp, UnsafeRawPointer(bp), 1)
                    fill = 0
                }
                let whole = remaining >> 7
                if whole > 0 {
                    sha512Compress(hp, src, whole)
                    src += whole << 7
                    remaining -= whole << 7
                }
                if remaining > 0 {
                    bp.copyMemory(from: src, byteCount: remaining)
                    fill = remaining
                }
            }
        }
        buffered = fill
    }

    /// Writes the 64-byte digest to `digest` and wipes the state.
    package mutating func finalize(into digest: UnsafeMutableRawPointer) {
        let bitsHigh = byteCount >> 61
        let bitsLow = byteCount << 3
        var fill = buffered
        withUnsafeMutableBytes(of: &h) { hRaw in
            let hp = hRaw.baseAddress.unsafelyUnwrapped.assumingMemoryBound(to: UInt64.self)
            withUnsafeMutableBytes(of: &block) { bRaw in
                let bp = bRaw.baseAddress.unsafelyUnwrapped
                bp.storeBytes(of: 0x80, toByteOffset: fill, as: UInt8.self)
                fill += 1
                if fill > 112 {
                    // No room for the 16-byte length: pad out this block and start another.
                    (bp + fill).initializeMemory(as: UInt8.self, repeating: 0, count: 128 - fill)
                    sha512Compress(hp, UnsafeRawPointer(bp), 1)
                    fill = 0
                }
                (bp + fill).initializeMemory(as: UInt8.self, repeating: 0, count: 112 - fill)
                bp.storeBytes(of: bitsHigh.bigEndian, toByteOffset: 112, as: UInt64.self)
                bp.storeBytes(of: bitsLow.bigEndian, toByteOffset: 120, as: UInt64.self)
                sha512Compress(hp, UnsafeRawPointer(bp), 1)
                for i in 0..<8 {
                    digest.storeBytes(of: hp[i].bigEndian, toByteOffset: i << 3, as: UInt64.self)
                }
            }
        }
        wipe()
    }

    /// Zeroes chaining value, buffer and counters (the state may have absorbed secrets).
    mutating func wipe() {
        withUnsafeMutableBytes(of: &h) { secureZero($0.baseAddress.unsafelyUnwrapped, count: $0.count) }
        withUnsafeMutableBytes(of: &block) { secureZero($0.baseAddress.unsafelyUnwrapped, count: $0.count) }
        buffered = 0
        byteCount = 0
    }

    /// One-shot SHA-512 of `count` bytes at `data` into a 64-byte `digest`, wiping the state.
    static func hash(_ data: UnsafeRawPointer, _ count: Int, into digest: UnsafeMutableRawPointer) {
        var st = SHA512State()
        st.update(UnsafeRawBufferPointer(start: data, count: count))
        st.finalize(into: digest)
    }
}

/// SHA-512 round constants K0...K79.
private let sha512K: [UInt64] = [
    0x428a2f98d728ae22, 0x7137449123ef65cd, 0xb5c0fbcfec4d3b2f, 0xe9b5dba58189dbbc,
    0x3956c25bf348b538, 0x59f111f1b605d019, 0x923f82a4af194f9b, 0xab1c5ed5da6d8118,
    0xd807aa98a3030242, 0x12835b0145706fbe, 0x243185be4ee4b28c, 0x550c7dc3d5ffb4e2,
    0x72be5d74f27b896f, 0x80deb1fe3b1696b1, 0x9bdc06a725c71235, 0xc19bf174cf692694,
    0xe49b69c19ef14ad2, 0xefbe4786384f25e3, 0x0fc19dc68b8cd5b5, 0x240ca1cc77ac9c65,
    0x2de92c6f592b0275, 0x4a7484aa6ea6e483, 0x5cb0a9dcbd41fbd4, 0x76f988da831153b5,
    0x983e5152ee66dfab, 0xa831c66d2db43210, 0xb00327c898fb213f, 0xbf597fc7beef0ee4,
    0xc6e00bf33da88fc2, 0xd5a79147930aa725, 0x06ca6351e003826f, 0x142929670a0e6e70,
    0x27b70a8546d22ffc, 0x2e1b21385c26c926, 0x4d2c6dfc5ac42aed, 0x53380d139d95b3df,
    0x650a73548baf63de, 0x766a0abb3c77b2a8, 0x81c2c92e47edaee6, 0x92722c851482353b,
    0xa2bfe8a14cf10364, 0xa81a664bbc423001, 0xc24b8b70d0f89791, 0xc76c51a30654be30,
    0xd192e819d6ef5218, 0xd69906245565a910, 0xf40e35855771202a, 0x106aa07032bbd1b8,
    0x19a4c116b8d2d0c8, 0x1e376c085141ab53, 0x2748774cdf8eeb99, 0x34b0bcb5e19b48a8,
    0x391c0cb3c5c95a63, 0x4ed8aa4ae3418acb, 0x5b9cca4f7763e373, 0x682e6ff3d6b2b8a3,
    0x748f82ee5defb2fc, 0x78a5636f43172f60, 0x84c87814a1f0ab72, 0x8cc702081a6439ec,
    0x90befffa23631e28, 0xa4506cebde82bde9, 0xbef9a3f7b2c67915, 0xc67178f2e372532b,
    0xca273eceea26619c, 0xd186b8c721c0c207, 0xeada7dd6cde0eb1e, 0xf57d4f7fee6ed178,
    0x06f067aa72176fba, 0x0a637dc5a2c898a6, 0x113f9804bef90dae, 0x1b710b35131c471b,
    0x28db77f523047d84, 0x32caab7b40c72493, 0x3c9ebe0a15c9bebc, 0x431d67c49c100d4c,
    0x4cc5d4becb3e42b6, 0x597f299cfc657e2a, 0x5fcb6fab3ad6faec, 0x6c44198c4a475817,
]

@inline(__always) private func rotr(_ x: UInt64, _ n: UInt64) -> UInt64 {
    (x &>> n) | (x &<< (64 &- n))
}

/// One SHA-512 round; the caller rotates the roles of the eight working variables.
@inline(__always) private func sha512Round(_ a: UInt64, _ b: UInt64, _ c: UInt64, _ d: inout UInt64,
                                           _ e: UInt64, _ f: UInt64, _ g: UInt64, _ h: inout UInt64,
                                           _ kw: UInt64) {
    let t1 = h &+ (rotr(e, 14) ^ rotr(e, 18) ^ rotr(e, 41)) &+ ((e & f) ^ (~e & g)) &+ kw
    let t2 = (rotr(a, 28) ^ rotr(a, 34) ^ rotr(a, 39)) &+ ((a & b) ^ (a & c) ^ (b & c))
    d &+= t1
    h = t1 &+ t2
}

/// Compresses `blocks` consecutive 128-byte blocks at `data` into the chaining value at `hp`.
private func sha512Compress(_ hp: UnsafeMutablePointer<UInt64>, _ data: UnsafeRawPointer, _ blocks: Int) {
    sha512K.withUnsafeBufferPointer { kBuf in
        let k = kBuf.baseAddress.unsafelyUnwrapped
        withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 80) { wBuf in
            let w = wBuf.baseAddress.unsafelyUnwrapped
            var p = data
            var h0 = hp[0], h1 = hp[1], h2 = hp[2], h3 = hp[3]
            var h4 = hp[4], h5 = hp[5], h6 = hp[6], h7 = hp[7]
            for _ in 0..<blocks {
                for t in 0..<16 {
                    w[t] = UInt64(bigEndian: p.loadUnaligned(fromByteOffset: t << 3, as: UInt64.self))
                }
                for t in 16..<80 {
                    let x = w[t - 15], y = w[t - 2]
                    let s0 = rotr(x, 1) ^ rotr(x, 8) ^ (x &>> 7)
                    let s1 = rotr(y, 19) ^ rotr(y, 61) ^ (y &>> 6)
                    w[t] = s1 &+ w[t - 7] &+ s0 &+ w[t - 16]
                }
                var a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, hh = h7
                // Eight rounds per iteration with the working variables renamed instead of shifted.
                var t = 0
                while t < 80 {
                    sha512Round(a, b, c, &d, e, f, g, &hh, k[t] &+ w[t])
                    sha512Round(hh, a, b, &c, d, e, f, &g, k[t + 1] &+ w[t + 1])
                    sha512Round(g, hh, a, &b, c, d, e, &f, k[t + 2] &+ w[t + 2])
                    sha512Round(f, g, hh, &a, b, c, d, &e, k[t + 3] &+ w[t + 3])
                    sha512Round(e, f, g, &hh, a, b, c, &d, k[t + 4] &+ w[t + 4])
                    sha512Round(d, e, f, &g, hh, a, b, &c, k[t + 5] &+ w[t + 5])
                    sha512Round(c, d, e, &f, g, hh, a, &b, k[t + 6] &+ w[t + 6])
                    sha512Round(b, c, d, &e, f, g, hh, &a, k[t + 7] &+ w[t + 7])
                    t += 8
                }
                h0 &+= a; h1 &+= b; h2 &+= c; h3 &+= d
                h4 &+= e; h5 &+= f; h6 &+= g; h7 &+= hh
                p += 128
            }
            hp[0] = h0; hp[1] = h1; hp[2] = h2; hp[3] = h3
            hp[4] = h4; hp[5] = h5; hp[6] = h6; hp[7] = h7
            // The schedule is derived from the (possibly secret) message.
            secureZero(UnsafeMutableRawPointer(w), count: 80 * 8)
        }
    }
}
