// ML-DSA-65 signing (FIPS 204 Algorithm 7, Sign_internal) on an expanded private key.

extension MLDSA65PrivateKeyStorage {
    /// Signs the 64-byte message representative μ with the 32-byte `randomness` (rnd; all zeros for
    /// the deterministic variant) and returns the 3309-byte signature c̃ ‖ z ‖ h.
    ///
    /// Each attempt draws y, computes w = A·y and the challenge c, and is rejected (FIPS 204's
    /// loop) when z = y + c·s1, the low bits of w − c·s2, or c·t0 could reveal the key, or when
    /// the hint has too many ones. Only those accept/reject decisions (and the challenge, a hash
    /// output) steer branches; the arithmetic on secret values is branch-free.
    func sign(mu: UnsafeRawBufferPointer, randomness: UnsafeRawBufferPointer) -> MLDSABytes {
        typealias P = MLDSA65Parameters
        let n = P.n, k = P.k, l = P.l
        let signature = MLDSABytes(count: P.signatureBytes, secret: false, zeroed: false)

        // Scratch space, zeroed when these buffers are released at the end of this call.
        let polys = MLDSAPolynomials(polynomials: MLDSAMaskSchedule.maskPolynomials + l + 2 * k + 1, zeroed: false)
        let transformed = MLDSANTTPolynomials(polynomials: l + k, zeroed: false)
        let yHat = transformed.polynomial(0)   // NTT(y)
        let wHat = transformed.polynomial(l)   // A·y
        let masks = polys.polynomial(0)        // y of this attempt and the next
        let z = polys.polynomial(2 * l)
        let w0 = polys.polynomial(3 * l)       // the low bits of w, then r0 = w0 − c·s2
        let w1 = polys.polynomial(3 * l + k)
        // c·t0, then the hint, in wHat's space (unused from NTT^-1 to the next attempt's A·y;
        // Int32 may alias UInt32).
        let temp = UnsafeMutableRawPointer(wHat).assumingMemoryBound(to: Int32.self)
        let c = polys.polynomial(3 * l + 2 * k)
        // c·s2, then c·s1 (exact, |coefficient| ≤ β), and c's positions.
        let shortProduct = MLDSABuffer<Int16>(polynomials: k, zeroed: false)
        let cs = shortProduct.base
        let offsetBuffer = MLDSABuffer<Int>(
            count: MLDSAChallenge.offsetCapacity + 2 * MLDSAChallenge.alignedOffsetCapacity + P.tau, zeroed: false)
        let offsets = offsetBuffer.base
        let shortOffsets = offsets + MLDSAChallenge.offsetCapacity                 // into s1, s2
        let t0Offsets = shortOffsets + MLDSAChallenge.alignedOffsetCapacity        // into t0
        let positions = t0Offsets + MLDSAChallenge.alignedOffsetCapacity           // c's nonzero positions
        // ρ'', μ ‖ w1Encode(w1) (the challenge hash's input) and the mask streams' seeds and
        // output, all zeroed on release.
        let bytes = MLDSABytes(
            count: 2 * P.hashBytes + P.w1Bytes + MLDSAMaskSchedule.scratchBytes, zeroed: false)
        let rhoDoublePrime = bytes.base
        let challengeInput = bytes.base + P.hashBytes
        let w1Bytes = challengeInput + P.hashBytes
        let maskScratch = UnsafeMutableRawPointer(w1Bytes + P.w1Bytes)
        guard let muBase = mu.baseAddress, mu.count == P.hashBytes else { preconditionFailure("μ is 64 bytes") }
        challengeInput.update(from: muBase.assumingMemoryBound(to: UInt8.self), count: P.hashBytes)

        // ρ'' = H(K ‖ rnd ‖ μ, 64)
        var hash = MLDSAHash()
        hash.absorb(signingSeed)
        hash.absorb(randomness)
        hash.absorb(mu)
        hash.finalize(into: UnsafeMutableRawBufferPointer(start: rhoDoublePrime, count: P.hashBytes))

        let challengeHash = UnsafeMutableRawBufferPointer(start: signature.base, count: P.challengeHashBytes)
        let matrix = self.matrix.base
        // y = ExpandMask(ρ'', 5·attempt) and the challenge hashes, on the two-state Keccak.
        var schedule = MLDSAMaskSchedule(rhoDoublePrime: rhoDoublePrime, masks: masks, scratch: maskScratch)
        defer { schedule.clear() }
        var attempt = 0
        while true {
            schedule.fill(attempt: attempt)
            let y = schedule.mask(attempt: attempt)

            // w = A·y; (w1, w0) = Decompose(w)
            MLDSAPolynomial.forwardNTT(y, into: yHat, count: l)
            MLDSAPolynomial.matrixTimesVector(wHat, matrix: matrix, yHat)
            MLDSAPolynomial.inverseNTT(wHat, into: w0, count: k)
            for i in 0..<(k * n) {
                let (high, low) = MLDSAField.decompose(w0[i])  // NTT^-1 returns [0, q)
                w1[i] = high
                w0[i] = low
            }

            // c̃ = H(μ ‖ w1Encode(w1), 48), c = SampleInBall(c̃)
            for row in 0..<k {
                MLDSAEncoding.packW1(w1 + row * n, into: w1Bytes + row * 128)
            }
            schedule.challengeHash(
                attempt: attempt, message: UnsafeRawBufferPointer(start: challengeInput, count: P.hashBytes + P.w1Bytes),
                into: challengeHash)
            schedule.sampleInBall(
                attempt: attempt, challenge: UnsafeRawBufferPointer(challengeHash), into: c, positions: positions)
            attempt &+= 1
            let counts = MLDSAChallenge.offsets(of: c, positions: positions, count: P.tau, into: offsets)
            MLDSAChallenge.alignedOffsets(offsets, counts: counts, polynomials: l + k, of: Int16.self, into: shortOffsets)

            // r0 = LowBits(w − c·s2) = w0 − c·s2 (given the bound checked here), exact since
            // |w0| ≤ γ2 and |c·s2| ≤ β. Checked before z: it rejects about 68% of attempts, the z
            // bound about 38%, and every check must pass.
            MLDSAChallenge.multiply(
                shortExtended, first: l, count: k, aligned: shortOffsets, counts: counts, into: cs)
            for i in 0..<(k * n) { w0[i] &-= Int32(cs[i]) }
            if MLDSAPolynomial.exceedsMask(w0, count: k, bound: P.gamma2 - P.beta) != 0 { continue }

            // z = y + c·s1, exact (|y| ≤ γ1)
            MLDSAChallenge.multiply(
                shortExtended, first: 0, count: l, aligned: shortOffsets, counts: counts, into: cs)
            for i in 0..<(l * n) { z[i] = y[i] &+ Int32(cs[i]) }
            if MLDSAPolynomial.exceedsMask(z, count: l, bound: P.gamma1 - P.beta) != 0 { continue }

            // c·t0, exact (|c·t0| ≤ τ·2^12)
            MLDSAChallenge.alignedOffsets(offsets, counts: counts, polynomials: k, of: Int32.self, into: t0Offsets)
            MLDSAChallenge.multiply(
                t0Extended.base, first: 0, count: k, aligned: t0Offsets, counts: counts,
                into: temp)
            if MLDSAPolynomial.exceedsMask(temp, count: k, bound: P.gamma2) != 0 { continue }

            // h = MakeHint(−c·t0, w − c·s2 + c·t0), at most ω ones
            var ones: Int32 = 0
            for i in 0..<(k * n) {
                let hint = MLDSAField.makeHint(low: w0[i] &+ temp[i], high: w1[i])
                temp[i] = hint
                ones &+= hint
            }
            if ones > Int32(P.omega) { continue }

            // σ = c̃ ‖ z ‖ h
            let zOffset = P.challengeHashBytes
            for r in 0..<l {
                MLDSAEncoding.packZ(z + r * n, into: signature.base + zOffset + r * 640)
            }
            MLDSAEncoding.packHint(temp, into: signature.base + zOffset + l * 640)
            return signature
        }
    }
}
