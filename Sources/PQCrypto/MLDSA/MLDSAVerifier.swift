// ML-DSA-65 verification (FIPS 204 Algorithm 8, Verify_internal) on an expanded public key.

extension MLDSA65PublicKeyStorage {
    /// Checks `signature` against the 64-byte message representative μ. Returns false for any
    /// malformed signature (wrong length, bad hint encoding, ‖z‖∞ ≥ γ1 − β) as well as for a wrong
    /// one. Only public values are involved, so it may return early.
    func verify(mu: UnsafeRawBufferPointer, signature: UnsafeRawBufferPointer) -> Bool {
        typealias P = MLDSA65Parameters
        let n = P.n, k = P.k, l = P.l
        guard signature.count == P.signatureBytes,
              let sig = signature.baseAddress?.assumingMemoryBound(to: UInt8.self)
        else { return false }

        // Scratch space; everything here is public.
        let polys = MLDSAPolynomials(polynomials: l + 2 * k + 2, secret: false, zeroed: false)
        let z = polys.polynomial(0)
        let h = polys.polynomial(l)
        let w = polys.polynomial(l + k)
        let c = polys.polynomial(l + 2 * k)
        let cTimesOnes = polys.polynomial(l + 2 * k + 1)
        let transformed = MLDSANTTPolynomials(polynomials: l + k, secret: false, zeroed: false)
        let zHat = transformed.polynomial(0)
        let wHat = transformed.polynomial(l)
        let shortProduct = MLDSABuffer<Int16>(polynomials: k, secret: false, zeroed: false)
        let offsets = MLDSABuffer<Int>(count: 2 * MLDSAChallenge.offsetCapacity, secret: false, zeroed: false)
        let t1Offsets = offsets.base + MLDSAChallenge.offsetCapacity

        // sigDecode (Algorithm 27) and the bound on z
        let zOffset = P.challengeHashBytes
        for r in 0..<l {
            MLDSAEncoding.unpackZ(sig + zOffset + r * 640, into: z + r * n)
        }
        if MLDSAPolynomial.exceedsMask(z, count: l, bound: P.gamma1 - P.beta) != 0 { return false }
        guard MLDSAEncoding.unpackHint(sig + zOffset + l * 640, into: h) else { return false }

        // w'Approx = NTT^-1(Â·NTT(z)) − c·t1·2^d, with c·t1 exact in the normal domain:
        // c·(t1 − 512) from the extended key, plus 512·c·(1 + X + … + X^255).
        let challengeHash = UnsafeRawBufferPointer(start: sig, count: P.challengeHashBytes)
        MLDSASampling.sampleInBall(challengeHash, into: c)
        MLDSAPolynomial.forwardNTT(z, into: zHat, count: l)
        MLDSAPolynomial.matrixTimesVector(wHat, matrix: matrix.base, zHat)
        MLDSAPolynomial.inverseNTT(wHat, into: w, count: k)
        let counts = MLDSAChallenge.offsets(of: c, into: offsets.base)
        MLDSAChallenge.alignedOffsets(offsets.base, counts: counts, polynomials: k, of: Int16.self, into: t1Offsets)
        MLDSAChallenge.multiply(t1Extended.base, first: 0, count: k, aligned: t1Offsets,
                                counts: counts, into: shortProduct.base)
        MLDSAChallenge.allOnesProduct(c, into: cTimesOnes)

        // w1' = UseHint(h, w'Approx); c̃' = H(μ ‖ w1Encode(w1'), 48)
        for row in 0..<k {
            let wRow = w + row &* n, hRow = h + row &* n, product = shortProduct.base + row &* n
            for i in 0..<n {
                // |c·t1| ≤ τ·1023, so c·t1·2^d < 2^29 and the difference is in reduce32's range.
                let cTimesT1 = Int32(product[i]) &+ 512 &* cTimesOnes[i]
                let r = MLDSAField.addQIfNegative(MLDSAField.reduce32(wRow[i] &- cTimesT1 &<< P.d))
                wRow[i] = MLDSAField.useHint(hRow[i], r)
            }
        }
        let bytes = MLDSABytes(count: P.w1Bytes + P.challengeHashBytes, secret: false, zeroed: false)
        for row in 0..<k {
            MLDSAEncoding.packW1(w + row * n, into: bytes.base + row * 128)
        }
        var hash = MLDSAHash()
        hash.absorb(mu)
        hash.absorb(bytes.bytes(0..<P.w1Bytes))
        let recomputed = UnsafeMutableRawBufferPointer(start: bytes.base + P.w1Bytes, count: P.challengeHashBytes)
        hash.finalize(into: recomputed)
        return constantTimeEquals(UnsafeRawBufferPointer(recomputed), challengeHash)
    }
}
