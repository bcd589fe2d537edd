// XSalsa20-Poly1305 as libsodium's crypto_secretbox_easy / crypto_secretbox_open_easy:
//   subkey = HSalsa20(key, nonce[0..<16]); stream = Salsa20(subkey, nonce[16..<24]) from block 0;
//   keystream bytes 0..<32 are the Poly1305 key, the message is XORed with keystream bytes 32...;
//   box = Poly1305(ciphertext) ‖ ciphertext.

import PQCrypto


/// XSalsa20-Poly1305 as libsodium's "easy" secretbox (output = tag(16) ‖ ciphertext).
package enum XSalsa20Poly1305 {
    /// Key size in bytes.
    package static let keyByteCount = 32
    /// Nonce size in bytes.
    package static let nonceByteCount = 24
    /// Tag size in bytes.
    package static let tagByteCount = 16

    /// Seals `message` into `output` (exactly `message.count + 16` bytes: tag ‖ ciphertext); key 32, nonce 24 bytes.
    /// `message` may be distinct from `output` or may overlap it in any way (e.g. sit at `output.baseAddress + 16`
    /// for in-place sealing). Returns false on wrong sizes.
    package static func seal(_ message: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer,
                             key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer) -> Bool {
        guard key.count == keyByteCount, nonce.count == nonceByteCount,
              output.count >= tagByteCount, output.count - tagByteCount == message.count,
              let keyBase = key.baseAddress, let nonceBase = nonce.baseAddress,
              let out = output.baseAddress
        else { return false }
        let n = message.count
        let ct = out + tagByteCount
        var src = UnsafeRawPointer(ct)
        if n > 0, let m = message.baseAddress, UnsafeRawPointer(ct) != m {
            if overlaps(m, n, UnsafeRawPointer(out), output.count) {
                ct.copyMemory(from: m, byteCount: n)   // memmove, then encrypt in place
            } else {
                src = m
            }
        }
        var stream = Stream(key: keyBase, nonce: nonceBase)
        var mac = stream.makeMAC()
        stream.xorHead(src, ct, n)
        mac.update(UnsafeRawPointer(ct), min(32, n))
        if n > 32 {
            // Encrypt and authenticate in one interleaved pass (each 256-byte unit is authenticated while the
            // next one is encrypted, so it is still in L1).
            Salsa20.xorThenAuthenticate(source: src + 32, destination: ct + 32, count: n - 32,
                                        key: stream.key, counter: 1, mac: &mac)
        }
        mac.finish(into: out)
        stream.wipe()
        return true
    }

    /// Verifies the tag (constant time) and decrypts `box` (tag ‖ ciphertext) into `output` (`box.count - 16` bytes).
    /// Writes nothing to `output` when the tag fails. `output` may overlap `box` in any way. Returns false on
    /// failure or wrong sizes.
    package static func open(_ box: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer,
                             key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer) -> Bool {
        guard key.count == keyByteCount, nonce.count == nonceByteCount,
              box.count >= tagByteCount, output.count == box.count - tagByteCount,
              let keyBase = key.baseAddress, let nonceBase = nonce.baseAddress,
              let boxBase = box.baseAddress
        else { return false }
        let n = output.count
        let ct = boxBase + tagByteCount
        var stream = Stream(key: keyBase, nonce: nonceBase)
        var mac = stream.makeMAC()
        mac.update(ct, n)
        // The expected tag is secret too (it would let anyone forge this ciphertext): wipe it after use.
        var tag: (UInt64, UInt64) = (0, 0)
        let ok = withUnsafeMutableBytes(of: &tag) { t -> Bool in
            guard let tp = t.baseAddress else { return false }
            mac.finish(into: tp)
            let equal = constantTimeEquals(UnsafeRawBufferPointer(t), UnsafeRawBufferPointer(start: boxBase, count: tagByteCount))
            secureZero(tp, count: 16)
            return equal
        }
        guard ok, n > 0, let dst = output.baseAddress else {
            stream.wipe()
            return ok
        }
        var src = ct
        if UnsafeRawPointer(dst) != ct && overlaps(ct, n, UnsafeRawPointer(dst), n) {
            dst.copyMemory(from: ct, byteCount: n)     // memmove, then decrypt in place
            src = UnsafeRawPointer(dst)
        }
        stream.xorHead(src, dst, n)
        if n > 32 {
            Salsa20.xor(source: src + 32, destination: dst + 32, count: n - 32, key: stream.key, counter: 1)
        }
        stream.wipe()
        return true
    }

    // MARK: - Internals

    @inline(__always)
    private static func overlaps(_ a: UnsafeRawPointer, _ na: Int, _ b: UnsafeRawPointer, _ nb: Int) -> Bool {
        a < b + nb && b < a + na
    }

    /// The XSalsa20 stream of one (key, nonce): the Salsa20 subkey and keystream block 0 (MAC key and the
    /// keystream for message bytes 0..<32). Secret; `wipe()` it.
    private struct Stream {
        var key: SalsaKey
        var block0: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)

        @inline(__always)
        init(key k: UnsafeRawPointer, nonce: UnsafeRawPointer) {
            key = SalsaKey(xsalsaKey: k, nonce24: nonce)
            let sk = key
            withUnsafeMutableBytes(of: &block0) { b in
                if let bp = b.baseAddress { Salsa20.keystreamBlock(bp, key: sk, counter: 0) }
            }
        }

        /// The Poly1305 state keyed with keystream bytes 0..<32.
        @inline(__always)
        mutating func makeMAC() -> Poly1305Core {
            Poly1305Core(UInt64(littleEndian: block0.0), UInt64(littleEndian: block0.1),
                         UInt64(littleEndian: block0.2), UInt64(littleEndian: block0.3))
        }

        /// XORs message bytes 0..<min(32, n) with keystream bytes 32..<64.
        @inline(__always)
        mutating func xorHead(_ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
            let head = min(32, n)
            guard head > 0 else { return }
            withUnsafeBytes(of: &block0) { b in
                guard let ks = b.baseAddress else { return }
                for i in 0..<head {
                    dst.storeBytes(of: src.load(fromByteOffset: i, as: UInt8.self)
                                     ^ ks.load(fromByteOffset: 32 + i, as: UInt8.self),
                                   toByteOffset: i, as: UInt8.self)
                }
            }
        }

        mutating func wipe() {
            key.wipe()
            withUnsafeMutableBytes(of: &block0) { b in
                if let bp = b.baseAddress { secureZero(bp, count: b.count) }
            }
        }
    }
}
