// The pseudorandom samplers of ML-DSA (FIPS 204 §7.3): ExpandA (RejNTTPoly over SHAKE128),
// ExpandS (RejBoundedPoly over SHAKE256), ExpandMask and SampleInBall.

enum MLDSASampling {
    static let n = MLDSA65Parameters.n
    static let shake128Rate = 168
    static let shake256Rate = 136
    static let shakeDomain: UInt8 = 0x1F

    // MARK: ExpandA

    /// Â = ExpandA(ρ) (Algorithm 32): entry (r, s), stored at polynomial r·l + s, is
    /// RejNTTPoly(ρ ‖ s ‖ r), written centered (|x| ≤ (q−1)/2) in the Double NTT domain.
    ///
    /// All matrix sampling goes through this one function, so that a faster SHAKE128 (several
    /// instances at once) can be used here without touching the callers.
    static func expandA(rho: UnsafeRawBufferPointer, into matrix: UnsafeMutablePointer<Double>) {
        // Five blocks (280 candidates) almost always yield the 256 coefficients; more are read one
        // block (56 candidates) at a time. The byte buffer has slack for 4-byte loads at its end;
        // the candidate buffer has room for every candidate of the last block read.
        let initialBlocks = 5
        let byteCount = initialBlocks * shake128Rate
        let candidateCapacity = n + shake128Rate / 3
        withUnsafeTemporaryAllocation(byteCount: byteCount + 8 + 4 * candidateCapacity, alignment: 16) { buffer in
            guard let raw = buffer.baseAddress else { return }
            (raw + byteCount).initializeMemory(as: UInt8.self, repeating: 0, count: 8)
            let sampled = (raw + byteCount + 8).bindMemory(to: Int32.self, capacity: candidateCapacity)
            var prefix = KeccakSponge(rate: shake128Rate)
            prefix.absorb(rho)
            for row in 0..<MLDSA65Parameters.k {
                for column in 0..<MLDSA65Parameters.l {
                    var sponge = prefix
                    let indices: (UInt8, UInt8) = (UInt8(column), UInt8(row))
                    withUnsafeBytes(of: indices) { sponge.absorb($0) }
                    sponge.finishAbsorbing(domainSuffix: shakeDomain)
                    sponge.squeezeBlocks(into: raw, blocks: initialBlocks)
                    var filled = rejectUniform(UnsafeRawPointer(raw), candidates: byteCount / 3, into: sampled, filled: 0)
                    while filled < n {
                        sponge.squeezeBlocks(into: raw, blocks: 1)
                        filled = rejectUniform(UnsafeRawPointer(raw), candidates: shake128Rate / 3, into: sampled, filled: filled)
                    }
                    let poly = matrix + (row &* MLDSA65Parameters.l &+ column) &* n
                    let q = MLDSA65Parameters.q
                    for i in 0..<n {
                        let v = sampled[i]
                        poly[i] = Double(v &- ((((q &- 1) / 2) &- v) &>> 31 & q))
                    }
                }
            }
        }
    }

    /// The inner loop of RejNTTPoly (Algorithm 30 with CoeffFromThreeBytes): reads `candidates`
    /// 3-byte values (23 bits each) and appends those below q to `sampled` after the `filled`
    /// already there. Every candidate is stored and the count advances only on acceptance, so
    /// there is no unpredictable branch; `sampled` needs room for `filled + candidates` entries,
    /// and `bytes` one readable byte past the last candidate. Returns the new count.
    @inline(__always)
    static func rejectUniform(
        _ bytes: UnsafeRawPointer, candidates: Int, into sampled: UnsafeMutablePointer<Int32>, filled: Int
    ) -> Int {
        var filled = filled
        let q = MLDSA65Parameters.q
        for index in 0..<candidates {
            let word = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 3 &* index, as: UInt32.self))
            let candidate = Int32(bitPattern: word & 0x7F_FFFF)
            sampled[filled] = candidate
            filled &+= Int((candidate &- q) &>> 31) & 1
        }
        return filled
    }

    // MARK: ExpandS

    /// (s1, s2) = ExpandS(ρ') (Algorithm 33): polynomial r is RejBoundedPoly(ρ' ‖ r as two bytes),
    /// for η = 4: each nibble below 9 gives the coefficient 4 − nibble. Writes l + k polynomials.
    ///
    /// The coefficients are secret and are computed without branches; which nibbles are rejected
    /// is independent of the accepted values, so the loop may depend on it.
    static func expandS(rhoPrime: UnsafeRawBufferPointer, into s: UnsafeMutablePointer<Int32>) {
        let blocks = 2  // 544 nibbles for 256 coefficients: one more block is needed almost never
        withUnsafeTemporaryAllocation(byteCount: blocks * shake256Rate, alignment: 8) { buffer in
            guard let bytes = buffer.baseAddress else { return }
            let byteView = UnsafePointer(bytes.assumingMemoryBound(to: UInt8.self))
            var prefix = KeccakSponge(rate: shake256Rate)
            prefix.absorb(rhoPrime)
            for index in 0..<(MLDSA65Parameters.l + MLDSA65Parameters.k) {
                var sponge = prefix
                let nonce: (UInt8, UInt8) = (UInt8(truncatingIfNeeded: index), UInt8(truncatingIfNeeded: index >> 8))
                withUnsafeBytes(of: nonce) { sponge.absorb($0) }
                sponge.finishAbsorbing(domainSuffix: shakeDomain)
                let poly = s + index &* n
                sponge.squeezeBlocks(into: bytes, blocks: blocks)
                var filled = rejectEta(byteView, count: blocks * shake256Rate, into: poly, filled: 0)
                while filled < n {
                    sponge.squeezeBlocks(into: bytes, blocks: 1)
                    filled = rejectEta(byteView, count: shake256Rate, into: poly, filled: filled)
                }
                sponge.clear()
            }
            prefix.clear()
            secureZero(UnsafeMutableRawPointer(bytes), count: blocks * shake256Rate)
        }
    }

    /// The inner loop of RejBoundedPoly for η = 4 (Algorithm 31 with CoeffFromHalfByte).
    @inline(__always)
    static func rejectEta(
        _ bytes: UnsafePointer<UInt8>, count: Int, into poly: UnsafeMutablePointer<Int32>, filled: Int
    ) -> Int {
        var filled = filled
        var position = 0
        while filled < n && position < count {
            let byte = bytes[position]
            position &+= 1
            let low = Int32(byte & 15)
            let high = Int32(byte &>> 4)
            poly[filled] = 4 &- low
            filled &+= Int((low &- 9) &>> 31) & 1
            if filled < n {
                poly[filled] = 4 &- high
                filled &+= Int((high &- 9) &>> 31) & 1
            }
        }
        return filled
    }

    // MARK: ExpandMask

    /// y = ExpandMask(ρ'', κ) (Algorithm 34) for γ1 = 2^19: polynomial r is the 20-bit unpacking of
    /// 640 bytes of SHAKE256(ρ'' ‖ (κ + r) as two bytes). Writes l polynomials in (−γ1, γ1].
    /// `prefix` has already absorbed ρ''.
    static func expandMask(
        prefix: KeccakSponge, kappa: Int, into y: UnsafeMutablePointer<Int32>,
        scratch: UnsafeMutableRawPointer
    ) {
        let blocks = 5  // 680 bytes ≥ 640
        let bytes = UnsafePointer(scratch.assumingMemoryBound(to: UInt8.self))
        for r in 0..<MLDSA65Parameters.l {
            var sponge = prefix
            let counter = kappa &+ r
            let nonce: (UInt8, UInt8) = (UInt8(truncatingIfNeeded: counter), UInt8(truncatingIfNeeded: counter >> 8))
            withUnsafeBytes(of: nonce) { sponge.absorb($0) }
            sponge.finishAbsorbing(domainSuffix: shakeDomain)
            sponge.squeezeBlocks(into: scratch, blocks: blocks)
            sponge.clear()
            MLDSAEncoding.unpackZ(bytes, into: y + r &* n)
        }
    }

    // MARK: SampleInBall

    /// c = SampleInBall(c̃) (Algorithm 29): τ = 49 coefficients ±1, the rest 0.
    ///
    /// c̃ is a hash output; for a rejected attempt it is never revealed, but learning it does not
    /// help an attacker (it is a random-oracle value independent of the key given w1), so the
    /// positions drawn here may steer memory accesses, as in the reference implementations.
    static func sampleInBall(_ challengeHash: UnsafeRawBufferPointer, into c: UnsafeMutablePointer<Int32>) {
        c.initialize(repeating: 0, count: n)
        var sponge = KeccakSponge(rate: shake256Rate)
        sponge.absorb(challengeHash)
        sponge.finishAbsorbing(domainSuffix: shakeDomain)
        withUnsafeTemporaryAllocation(byteCount: shake256Rate, alignment: 8) { buffer in
            guard let raw = buffer.baseAddress else { return }
            let bytes = raw.assumingMemoryBound(to: UInt8.self)
            sponge.squeezeBlocks(into: raw, blocks: 1)
            var signs: UInt64 = 0
            for i in 0..<8 { signs |= UInt64(bytes[i]) &<< UInt64(8 &* i) }
            var position = 8
            for i in (n - MLDSA65Parameters.tau)..<n {
                var j: Int
                repeat {
                    if position == shake256Rate {
                        sponge.squeezeBlocks(into: raw, blocks: 1)
                        position = 0
                    }
                    j = Int(bytes[position])
                    position &+= 1
                } while j > i
                c[i] = c[j]
                c[j] = 1 &- 2 &* Int32(truncatingIfNeeded: signs & 1)
                signs &>>= 1
            }
        }
    }
}
