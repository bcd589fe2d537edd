// The pseudorandom samplers of ML-DSA (FIPS 204 §7.3): ExpandA (RejNTTPoly over SHAKE128),
// ExpandS (RejBoundedPoly over SHAKE256), ExpandMask and SampleInBall.

enum MLDSASampling {
    static let n = MLDSA65Parameters.n
    static let shake128Rate = 168
    static let shake256Rate = 136
    static let shakeDomain: UInt8 = 0x1F

    // MARK: Streams two at a time

    /// Runs `count` SHAKE streams of one rate two at a time, on the two-state Keccak (one
    /// permutation of two states costs little more than one of one state). Stream i runs in state
    /// `lane` (0 or 1) and absorbs the `seedLength` bytes (fewer than the rate) that
    /// `start(i, lane, seed)` writes; `consume(i, lane, bytes, count)` then reads its first
    /// `initialBlocks` blocks and returns whether stream i is done, and is called again with one
    /// more block at a time until it is. When `count` is odd the last pair's second state runs
    /// idle on a copy of the first seed. `scratch` must hold
    /// ``pairScratchBytes(seedLength:rate:initialBlocks:)`` bytes; it holds the seeds and output
    /// afterwards, for a caller with secret streams to zero.
    ///
    /// When a stream is done depends only on how many candidates were rejected, which is
    /// independent of the values accepted, so that may steer the loop.
    @inline(__always)
    static func forEachStreamPair(
        count: Int, rate: Int, seedLength: Int, initialBlocks: Int, scratch: UnsafeMutableRawPointer,
        start: (_ stream: Int, _ lane: Int, _ seed: UnsafeMutableRawPointer) -> Void,
        consume: (_ stream: Int, _ lane: Int, _ bytes: UnsafeRawPointer, _ count: Int) -> Bool
    ) {
        let outputBytes = initialBlocks * rate + 8  // slack for the 4-byte loads of rejectUniform
        let seeds = (scratch, scratch + seedLength)
        let outputs = (scratch + 2 * seedLength, scratch + 2 * seedLength + outputBytes)
        var first = 0
        while first < count {
            let second = first + 1, idle = second == count
            start(first, 0, seeds.0)
            if idle { seeds.1.copyMemory(from: seeds.0, byteCount: seedLength) } else { start(second, 1, seeds.1) }
            var sponge = KeccakSpongeX2(
                rate: rate, first: UnsafeRawBufferPointer(start: seeds.0, count: seedLength),
                second: UnsafeRawBufferPointer(start: seeds.1, count: seedLength))
            sponge.squeezeBlocks(first: outputs.0, second: outputs.1, blocks: initialBlocks)
            var done0 = consume(first, 0, outputs.0, initialBlocks * rate)
            var done1 = idle || consume(second, 1, outputs.1, initialBlocks * rate)
            while !(done0 && done1) {
                sponge.squeezeBlocks(first: outputs.0, second: outputs.1, blocks: 1)
                if !done0 { done0 = consume(first, 0, outputs.0, rate) }
                if !done1 { done1 = consume(second, 1, outputs.1, rate) }
            }
            sponge.clear()
            first += 2
        }
    }

    /// The scratch size ``forEachStreamPair(count:rate:seedLength:initialBlocks:scratch:start:consume:)`` needs.
    static func pairScratchBytes(seedLength: Int, rate: Int, initialBlocks: Int) -> Int {
        2 * seedLength + 2 * (initialBlocks * rate + 8)
    }

    // MARK: ExpandA

    /// Â = ExpandA(ρ) (Algorithm 32): entry (r, s), stored at polynomial r·l + s, is
    /// RejNTTPoly(ρ ‖ s ‖ r), with coefficients in [0, q), in the matrix layout (see
    /// ``MLDSAPolynomial/matrixTimesVector(_:matrix:_:)``).
    ///
    /// All matrix sampling goes through this one function, two entries at a time.
    static func expandA(rho: UnsafeRawBufferPointer, into matrix: UnsafeMutablePointer<UInt64>) {
        guard let rhoBase = rho.baseAddress, rho.count == 32 else { preconditionFailure("ρ is 32 bytes") }
        // Five blocks (280 candidates) almost always yield the 256 coefficients; more are read one
        // block (56 candidates) at a time. Each stream's candidates go to its own buffer, which has
        // room for every candidate of the last block read.
        let initialBlocks = 5, seedLength = 34
        let scratchBytes = pairScratchBytes(seedLength: seedLength, rate: shake128Rate, initialBlocks: initialBlocks)
        let candidateCapacity = n + shake128Rate / 3
        withUnsafeTemporaryAllocation(byteCount: scratchBytes + 2 * 4 * candidateCapacity, alignment: 16) { buffer in
            guard let raw = buffer.baseAddress else { return }
            raw.initializeMemory(as: UInt8.self, repeating: 0, count: scratchBytes)
            let candidates = (raw + scratchBytes).bindMemory(to: Int32.self, capacity: 2 * candidateCapacity)
            var filled = (0, 0)
            let l = MLDSA65Parameters.l
            forEachStreamPair(
                count: MLDSA65Parameters.k * l, rate: shake128Rate, seedLength: seedLength,
                initialBlocks: initialBlocks, scratch: raw,
                start: { entry, lane, seed in
                    seed.copyMemory(from: rhoBase, byteCount: 32)
                    seed.storeBytes(of: UInt8(entry % l), toByteOffset: 32, as: UInt8.self)
                    seed.storeBytes(of: UInt8(entry / l), toByteOffset: 33, as: UInt8.self)
                    if lane == 0 { filled.0 = 0 } else { filled.1 = 0 }
                },
                consume: { entry, lane, bytes, count in
                    let previouslyFilled = lane == 0 ? filled.0 : filled.1
                    // Usually (78%) none of the first 256 candidates is rejected.
                    if previouslyFilled == 0 && count / 3 >= n
                        && uniformWithoutRejections(bytes, into: matrix + entry &* n) {
                        return true
                    }
                    let sampled = candidates + lane * candidateCapacity
                    let laneFilled = rejectUniform(
                        bytes, candidates: count / 3, into: sampled, filled: previouslyFilled)
                    if lane == 0 { filled.0 = laneFilled } else { filled.1 = laneFilled }
                    guard laneFilled >= n else { return false }
                    // The matrix layout: each group of four as a0, a2, a1, a3, zero-extended
                    // (the low and high halves of the group read as two UInt64).
                    let poly = UnsafeMutableRawPointer(matrix + entry &* n)
                    let source = UnsafeRawPointer(sampled)
                    let low = SIMD2<UInt64>(repeating: 0xFFFF_FFFF)
                    var g = 0
                    while g < n {
                        let x = source.loadUnaligned(fromByteOffset: g &* 4, as: SIMD2<UInt64>.self)
                        poly.storeBytes(of: x & low, toByteOffset: g &* 8, as: SIMD2<UInt64>.self)
                        poly.storeBytes(of: x &>> 32, toByteOffset: g &* 8 &+ 16, as: SIMD2<UInt64>.self)
                        g &+= 4
                    }
                    return true
                })
        }
    }

    /// RejNTTPoly's common case: writes the first 256 candidates of `bytes` (770 bytes readable)
    /// to `poly` in the matrix layout and returns whether all of them are below q, in which case
    /// they are the polynomial (78% of polynomials). ρ is public, so the outcome may steer the
    /// caller.
    ///
    /// Candidates 4g … 4g + 3 are the 3-byte values at 12g, 12g + 3, 12g + 6 and 12g + 9. The
    /// 8-byte words at 12g and 12g + 6, as two 64-bit lanes, hold candidates 4g and 4g + 2 in their
    /// low 23 bits and 4g + 1 and 4g + 3 from bit 24: masked, they are the group's two 16-byte
    /// words of the matrix layout, with no shuffling. A candidate is q or more exactly when adding
    /// 2^32 − q carries into bit 32.
    @inline(__always)
    static func uniformWithoutRejections(_ bytes: UnsafeRawPointer, into poly: UnsafeMutablePointer<UInt64>) -> Bool {
        typealias W = SIMD2<UInt64>
        let mask = W(repeating: 0x7F_FFFF)
        let carry = W(repeating: (1 << 32) &- UInt64(MLDSA65Parameters.q))
        let target = UnsafeMutableRawPointer(poly)
        var overflow = W()
        var g = 0
        while g < n {
            let source = bytes + 3 &* g
            let words = W(UInt64(littleEndian: source.loadUnaligned(as: UInt64.self)),
                          UInt64(littleEndian: source.loadUnaligned(fromByteOffset: 6, as: UInt64.self)))
            let even = words & mask, odd = (words &>> 24) & mask
            target.storeBytes(of: even, toByteOffset: g &* 8, as: W.self)
            target.storeBytes(of: odd, toByteOffset: g &* 8 &+ 16, as: W.self)
            overflow |= (even &+ carry) | (odd &+ carry)
            g &+= 4
        }
        return (overflow[0] | overflow[1]) &>> 32 == 0
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
        guard let seedBase = rhoPrime.baseAddress, rhoPrime.count == 64 else { preconditionFailure("ρ' is 64 bytes") }
        let blocks = 2  // 544 nibbles for 256 coefficients: one more block is needed almost never
        let seedLength = 66
        let scratchBytes = pairScratchBytes(seedLength: seedLength, rate: shake256Rate, initialBlocks: blocks)
        withUnsafeTemporaryAllocation(byteCount: scratchBytes, alignment: 16) { buffer in
            guard let raw = buffer.baseAddress else { return }
            var filled = (0, 0)
            forEachStreamPair(
                count: MLDSA65Parameters.l + MLDSA65Parameters.k, rate: shake256Rate, seedLength: seedLength,
                initialBlocks: blocks, scratch: raw,
                start: { index, lane, seed in
                    seed.copyMemory(from: seedBase, byteCount: 64)
                    seed.storeBytes(of: UInt8(truncatingIfNeeded: index), toByteOffset: 64, as: UInt8.self)
                    seed.storeBytes(of: UInt8(truncatingIfNeeded: index >> 8), toByteOffset: 65, as: UInt8.self)
                    if lane == 0 { filled.0 = 0 } else { filled.1 = 0 }
                },
                consume: { index, lane, bytes, count in
                    let laneFilled = rejectEta(bytes.assumingMemoryBound(to: UInt8.self), count: count,
                                               into: s + index &* n, filled: lane == 0 ? filled.0 : filled.1)
                    if lane == 0 { filled.0 = laneFilled } else { filled.1 = laneFilled }
                    return laneFilled >= n
                })
            secureZero(raw, count: scratchBytes)
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
