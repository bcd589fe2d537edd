import PQCrypto
// Ed25519 (RFC 8032, pure variant, no context), byte-compatible with libsodium 1.0.18's
// crypto_sign_seed_keypair / crypto_sign_detached / crypto_sign_verify_detached.

/// Ed25519 key derivation, signing and verification over raw buffers.
package enum Ed25519Core {
    /// Public key (32 bytes) for a 32-byte seed. Returns false on wrong sizes.
    package static func publicKey(seed: UnsafeRawBufferPointer, into publicKey: UnsafeMutableRawBufferPointer) -> Bool {
        guard seed.count == 32, publicKey.count == 32,
              let seedPtr = seed.baseAddress, let pkPtr = publicKey.baseAddress else { return false }
        // az = SHA-512(seed); the clamped low half is the secret scalar.
        var az: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &az) { azRaw in
            let azp = azRaw.baseAddress.unsafelyUnwrapped
            SHA512State.hash(seedPtr, 32, into: azp)
            clamp(azp)
            var point = edScalarMultBase(UnsafeRawPointer(azp))
            point.p2.encode(into: pkPtr)
            edWipe(&point)
        }
        edWipe(&az)
        return true
    }

    /// Deterministic signature (64 bytes) of message under seed (and its public key, which the caller derived). false on wrong sizes.
    ///
    /// As in libsodium, the public key is used as given (it enters the challenge hash); the message
    /// may overlap the signature buffer, which is written only at the end.
    package static func sign(message: UnsafeRawBufferPointer, seed: UnsafeRawBufferPointer, publicKey: UnsafeRawBufferPointer,
                             into signature: UnsafeMutableRawBufferPointer) -> Bool {
        guard seed.count == 32, publicKey.count == 32, signature.count == 64,
              let seedPtr = seed.baseAddress, let pkPtr = publicKey.baseAddress,
              let sigPtr = signature.baseAddress else { return false }
        // Layout of the scratch area (all wiped at the end):
        //   0..<64    az = SHA-512(seed): clamped scalar a | nonce prefix
        //   64..<128  r = SHA-512(prefix || M), reduced mod L into its first 32 bytes
        //   128..<192 k = SHA-512(R || A || M), reduced mod L into its first 32 bytes
        //   192..<224 R (encoded), 224..<256 S
        withUnsafeTemporaryAllocation(byteCount: 256, alignment: 16) { scratch in
            let base = scratch.baseAddress.unsafelyUnwrapped
            let az = base, nonce = base + 64, hram = base + 128, rEnc = base + 192, sOut = base + 224
            SHA512State.hash(seedPtr, 32, into: az)

            var hs = SHA512State()
            hs.update(UnsafeRawBufferPointer(start: az + 32, count: 32))
            hs.update(message)
            hs.finalize(into: nonce)
            edScalarReduce64(UnsafeRawPointer(nonce), into: nonce)

            var point = edScalarMultBase(UnsafeRawPointer(nonce))
            point.p2.encode(into: rEnc)
            edWipe(&point)

            hs = SHA512State()
            hs.update(UnsafeRawBufferPointer(start: rEnc, count: 32))
            hs.update(UnsafeRawBufferPointer(start: pkPtr, count: 32))
            hs.update(message)
            hs.finalize(into: hram)
            edScalarReduce64(UnsafeRawPointer(hram), into: hram)

            clamp(az)
            edScalarMulAdd(UnsafeRawPointer(hram), UnsafeRawPointer(az), UnsafeRawPointer(nonce), into: sOut)
            sigPtr.copyMemory(from: UnsafeRawPointer(rEnc), byteCount: 64)
            secureZero(base, count: 256)
        }
        return true
    }

    /// libsodium-1.0.18-exact verification; false for any wrong size.
    ///
    /// Rules (libsodium built without ED25519_COMPAT): S must be < L; R and A must not be one of
    /// the small-order encodings libsodium blacklists (sign bit ignored); A's y must be < p; A must
    /// decode; then the cofactorless equation is checked by encoding S*B - k*A and comparing all
    /// 32 bytes with R.
    package static func verify(signature: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer,
                               publicKey: UnsafeRawBufferPointer) -> Bool {
        guard signature.count == 64, publicKey.count == 32,
              let sigPtr = signature.baseAddress, let pkPtr = publicKey.baseAddress else { return false }
        let sPtr = sigPtr + 32
        guard edScalarIsCanonical(sPtr), !hasSmallOrder(sigPtr) else { return false }
        guard isCanonicalY(pkPtr), !hasSmallOrder(pkPtr) else { return false }
        guard let negA = EdP3.decode(pkPtr, negate: true) else { return false }

        var h: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
        var check: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &h) { hRaw in
            let hp = hRaw.baseAddress.unsafelyUnwrapped
            var hs = SHA512State()
            hs.update(UnsafeRawBufferPointer(start: sigPtr, count: 32))
            hs.update(UnsafeRawBufferPointer(start: pkPtr, count: 32))
            hs.update(message)
            hs.finalize(into: hp)
            edScalarReduce64(UnsafeRawPointer(hp), into: hp)
            let r = edDoubleScalarMultVartime(UnsafeRawPointer(hp), negA, sPtr)
            withUnsafeMutableBytes(of: &check) { r.encode(into: $0.baseAddress.unsafelyUnwrapped) }
        }
        // Full 32-byte comparison without early exit.
        var diff: UInt64 = 0
        withUnsafeBytes(of: &check) { c in
            for i in 0..<4 {
                diff |= c.load(fromByteOffset: i << 3, as: UInt64.self)
                    ^ sigPtr.loadUnaligned(fromByteOffset: i << 3, as: UInt64.self)
            }
        }
        return diff == 0
    }

    /// RFC 8032 clamping of the first 32 bytes at p.
    @inline(__always) private static func clamp(_ p: UnsafeMutableRawPointer) {
        p.storeBytes(of: p.load(fromByteOffset: 0, as: UInt8.self) & 248, toByteOffset: 0, as: UInt8.self)
        p.storeBytes(of: (p.load(fromByteOffset: 31, as: UInt8.self) & 127) | 64, toByteOffset: 31, as: UInt8.self)
    }

    @inline(__always) private static func words(_ s: UnsafeRawPointer) -> (UInt64, UInt64, UInt64, UInt64) {
        (UInt64(littleEndian: s.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
         UInt64(littleEndian: s.loadUnaligned(fromByteOffset: 8, as: UInt64.self)),
         UInt64(littleEndian: s.loadUnaligned(fromByteOffset: 16, as: UInt64.self)),
         UInt64(littleEndian: s.loadUnaligned(fromByteOffset: 24, as: UInt64.self)))
    }

    /// The encoded y (top bit ignored) is < p, i.e. not in [2^255 - 19, 2^255).
    private static func isCanonicalY(_ s: UnsafeRawPointer) -> Bool {
        let w = words(s)
        let top = w.3 & 0x7fff_ffff_ffff_ffff
        return !(top == 0x7fff_ffff_ffff_ffff && w.2 == ~0 && w.1 == ~0 && w.0 >= 0xffff_ffff_ffff_ffed)
    }

    /// y-encodings (sign bit ignored) that libsodium 1.0.18 rejects as small order: 0, 1, the two
    /// order-8 y values, p-1, p, p+1.
    private static func hasSmallOrder(_ s: UnsafeRawPointer) -> Bool {
        let w = words(s)
        let y3 = w.3 & 0x7fff_ffff_ffff_ffff
        @inline(__always) func eq(_ a: UInt64, _ b: UInt64, _ c: UInt64, _ d: UInt64) -> Bool {
            w.0 == a && w.1 == b && w.2 == c && y3 == d
        }
        let ones = UInt64.max, top = UInt64(0x7fff_ffff_ffff_ffff)
        return eq(0, 0, 0, 0)
            || eq(1, 0, 0, 0)
            || eq(0xb027b2c28f95e826, 0xf098eff289f4c345, 0x3933c6d305acdfd5, 0x05fc536d880238b1)
            || eq(0x4fd84d3d706a17c7, 0x0f67100d760b3cba, 0xc6cc392cfa53202a, 0x7a03ac9277fdc74e)
            || eq(0xffff_ffff_ffff_ffec, ones, ones, top)
            || eq(0xffff_ffff_ffff_ffed, ones, ones, top)
            || eq(0xffff_ffff_ffff_ffee, ones, ones, top)
    }
}
