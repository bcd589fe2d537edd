// Sampling for ML-KEM: uniform NTT-domain polynomials from SHAKE128 (FIPS 203 Algorithm 7) and
// centred binomial noise from SHAKE256 (Algorithms 8 and the PRF of §4.1).

/// Reads 12-bit candidates from `bytes` (a multiple of 3 long) into `r`, keeping those below q,
/// until `needed` coefficients are written; returns how many were written.
@inlinable
func kyberRejectionSample(
    _ r: UnsafeMutablePointer<Int16>, needed: Int, from bytes: UnsafePointer<UInt8>, count: Int
) -> Int {
    var written = 0
    var position = 0
    // Fast paths while four (then two) more coefficients always fit: store the candidates and
    // advance the count by whether each was accepted, instead of branching on a coin flip. The
    // matrix is public, so this is for speed, not for constant time. The first reads four
    // candidates from six bytes with one 8-byte load, while that stays inside the buffer.
    while written + 4 <= needed && position + 8 <= count {
        let word = UInt64(littleEndian: UnsafeRawPointer(bytes + position).loadUnaligned(as: UInt64.self))
        position += 6
        let d0 = Int16(truncatingIfNeeded: word & 0xFFF), d1 = Int16(truncatingIfNeeded: (word &>> 12) & 0xFFF)
        let d2 = Int16(truncatingIfNeeded: (word &>> 24) & 0xFFF), d3 = Int16(truncatingIfNeeded: (word &>> 36) & 0xFFF)
        r[written] = d0
        written &+= d0 < 3329 ? 1 : 0
        r[written] = d1
        written &+= d1 < 3329 ? 1 : 0
        r[written] = d2
        written &+= d2 < 3329 ? 1 : 0
        r[written] = d3
        written &+= d3 < 3329 ? 1 : 0
    }
    while written + 2 <= needed && position + 3 <= count {
        let b0 = UInt16(bytes[position]), b1 = UInt16(bytes[position + 1]), b2 = UInt16(bytes[position + 2])
        position += 3
        let d1 = b0 | (b1 & 0x0F) << 8
        let d2 = b1 >> 4 | b2 << 4
        r[written] = Int16(bitPattern: d1)
        written += d1 < 3329 ? 1 : 0
        r[written] = Int16(bitPattern: d2)
        written += d2 < 3329 ? 1 : 0
    }
    while written < needed && position + 3 <= count {
        let b0 = UInt16(bytes[position]), b1 = UInt16(bytes[position + 1]), b2 = UInt16(bytes[position + 2])
        position += 3
        let d1 = b0 | (b1 & 0x0F) << 8
        let d2 = b1 >> 4 | b2 << 4
        if d1 < 3329 {
            r[written] = Int16(d1)
            written += 1
        }
        if d2 < 3329 && written < needed {
            r[written] = Int16(d2)
            written += 1
        }
    }
    return written
}

/// SampleNTT(ρ‖j‖i): the matrix entry Â[i][j], coefficients in [0, q).
@inlinable
func kyberSampleMatrixEntry(_ r: UnsafeMutablePointer<Int16>, rho: UnsafePointer<UInt8>, i: Int, j: Int) {
    var sponge = KeccakSponge(rate: 168)
    sponge.absorb(UnsafeRawBufferPointer(start: rho, count: 32))
    var indices: (UInt8, UInt8) = (UInt8(truncatingIfNeeded: j), UInt8(truncatingIfNeeded: i))
    withUnsafeBytes(of: &indices) { sponge.absorb($0) }
    sponge.finishAbsorbing(domainSuffix: 0x1F)
    // Three blocks give 336 candidates, enough for 256 accepted ones almost always.
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 3 * 168) { buffer in
        guard let bytes = buffer.baseAddress else { return }
        sponge.squeezeBlocks(into: UnsafeMutableRawPointer(bytes), blocks: 3)
        var filled = kyberRejectionSample(r, needed: 256, from: bytes, count: 3 * 168)
        while filled < 256 {
            sponge.squeezeBlocks(into: UnsafeMutableRawPointer(bytes), blocks: 1)
            filled += kyberRejectionSample(r + filled, needed: 256 - filled, from: bytes, count: 168)
        }
    }
}

/// SampleNTT(ρ‖j‖i) for two entries at once, with two SHAKE128 states permuted together.
@inlinable
func kyberSampleMatrixEntries(
    _ r0: UnsafeMutablePointer<Int16>, _ r1: UnsafeMutablePointer<Int16>,
    rho: UnsafePointer<UInt8>, indices0: (i: Int, j: Int), indices1: (i: Int, j: Int)
) {
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 2 * 34 + 6 * 168) { buffer in
        guard let base = buffer.baseAddress else { return }
        let seed0 = base, seed1 = base + 34, out0 = base + 68, out1 = base + 68 + 3 * 168
        seed0.update(from: rho, count: 32)
        seed1.update(from: rho, count: 32)
        seed0[32] = UInt8(truncatingIfNeeded: indices0.j)
        seed0[33] = UInt8(truncatingIfNeeded: indices0.i)
        seed1[32] = UInt8(truncatingIfNeeded: indices1.j)
        seed1[33] = UInt8(truncatingIfNeeded: indices1.i)
        var sponge = KeccakSpongeX2(
            rate: 168, first: UnsafeRawBufferPointer(start: seed0, count: 34),
            second: UnsafeRawBufferPointer(start: seed1, count: 34))
        sponge.squeezeBlocks(first: out0, second: out1, blocks: 3)
        var filled0 = kyberRejectionSample(r0, needed: 256, from: out0, count: 3 * 168)
        var filled1 = kyberRejectionSample(r1, needed: 256, from: out1, count: 3 * 168)
        while filled0 < 256 || filled1 < 256 {
            sponge.squeezeBlocks(first: out0, second: out1, blocks: 1)
            filled0 += kyberRejectionSample(r0 + filled0, needed: 256 - filled0, from: out0, count: 168)
            filled1 += kyberRejectionSample(r1 + filled1, needed: 256 - filled1, from: out1, count: 168)
        }
    }
}

/// Expands ρ into the 3×3 matrix Â, entry (i, j) at offset (3i + j)·256: four pairs of entries
/// through the two-state Keccak, the ninth alone.
@inlinable
func kyberExpandMatrix(_ matrix: UnsafeMutablePointer<Int16>, rho: UnsafePointer<UInt8>) {
    for pair in 0..<4 {
        let e0 = 2 * pair, e1 = 2 * pair + 1
        kyberSampleMatrixEntries(
            matrix + e0 * 256, matrix + e1 * 256, rho: rho,
            indices0: (e0 / 3, e0 % 3), indices1: (e1 / 3, e1 % 3))
    }
    kyberSampleMatrixEntry(matrix + 8 * 256, rho: rho, i: 2, j: 2)
}

/// Parsing an encapsulation key needs H(ek) = SHA3-256(ek) (nine permutations in a row) and Â.
/// This runs the hash in one state of the two-state Keccak while the other samples the entries
/// 6, 7 and 8 one after another (about three permutations each), then the entries 0–5 in pairs:
/// 18 two-state permutations where hashing and expanding separately take 12 and 12 one-state ones.
@inlinable
func kyberHashKeyAndExpandMatrix(
    _ encoded: UnsafePointer<UInt8>, hash: UnsafeMutablePointer<UInt8>, matrix: UnsafeMutablePointer<Int16>
) {
    let rho = encoded + 1152
    for pair in 0..<3 {
        let e0 = 2 * pair, e1 = 2 * pair + 1
        kyberSampleMatrixEntries(
            matrix + e0 * 256, matrix + e1 * 256, rho: rho,
            indices0: (e0 / 3, e0 % 3), indices1: (e1 / 3, e1 % 3))
    }
    let rate = 168, hashRate = 136, fullHashBlocks = MLKEM768.publicKeyByteCount / hashRate  // 8, then 96 bytes
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 34 + rate) { buffer in
        guard let seed = buffer.baseAddress else { return }
        let block = seed + 34
        seed.update(from: rho, count: 32)
        var state = KeccakStateX2()
        var hashBlocks = 0  // permutations the hash has had
        var entry = 6, filled = 0, starting = true
        while hashBlocks <= fullHashBlocks || entry < 9 {
            if hashBlocks < fullHashBlocks {
                let input = UnsafeRawPointer(encoded + hashRate * hashBlocks)
                for lane in 0..<(hashRate / 8) {
                    state.lanes[lane][0] ^= UInt64(littleEndian: input.loadUnaligned(fromByteOffset: 8 * lane, as: UInt64.self))
                }
            } else if hashBlocks == fullHashBlocks {
                // The last 96 bytes, SHA-3's domain bits 01 and the pad10*1 padding.
                let input = UnsafeRawPointer(encoded + hashRate * fullHashBlocks)
                for lane in 0..<12 {
                    state.lanes[lane][0] ^= UInt64(littleEndian: input.loadUnaligned(fromByteOffset: 8 * lane, as: UInt64.self))
                }
                state.lanes[12][0] ^= 0x06
                state.lanes[hashRate / 8 - 1][0] ^= 0x80 << 56
            }
            if entry < 9 && starting {
                for lane in 0..<25 { state.lanes[lane][1] = 0 }
                seed[32] = UInt8(truncatingIfNeeded: entry % 3)
                seed[33] = UInt8(truncatingIfNeeded: entry / 3)
                KeccakSpongeX2.absorbPadded(&state, lane: 1, UnsafeRawBufferPointer(start: seed, count: 34), rate: rate)
                starting = false
            }
            state.permute()
            if hashBlocks == fullHashBlocks {
                for lane in 0..<4 {
                    UnsafeMutableRawPointer(hash).storeBytes(
                        of: state.lanes[lane][0].littleEndian, toByteOffset: 8 * lane, as: UInt64.self)
                }
            }
            hashBlocks += 1
            if entry < 9 {
                for lane in 0..<(rate / 8) {
                    UnsafeMutableRawPointer(block).storeBytes(
                        of: state.lanes[lane][1].littleEndian, toByteOffset: 8 * lane, as: UInt64.self)
                }
                filled += kyberRejectionSample(matrix + 256 * entry + filled, needed: 256 - filled, from: block, count: rate)
                if filled == 256 {
                    entry += 1
                    filled = 0
                    starting = true
                }
            }
        }
    }
}

/// CBD_2 of 128 PRF bytes into `r`: coefficients in [-2, 2], no data-dependent branches or indices.
@inlinable
func kyberCenteredBinomial(_ bytes: UnsafePointer<UInt8>, into r: UnsafeMutablePointer<Int16>) {
    for i in 0..<32 {
        let t = UInt32(bytes[4 * i]) | UInt32(bytes[4 * i + 1]) << 8
            | UInt32(bytes[4 * i + 2]) << 16 | UInt32(bytes[4 * i + 3]) << 24
        let d = (t & 0x5555_5555) &+ ((t >> 1) & 0x5555_5555)
        for j in 0..<8 {
            let a = Int16(truncatingIfNeeded: (d >> (4 * UInt32(j))) & 3)
            let b = Int16(truncatingIfNeeded: (d >> (4 * UInt32(j) + 2)) & 3)
            r[8 * i + j] = a &- b
        }
    }
}

/// Two noise polynomials SamplePolyCBD_2(PRF_2(seed, nonce)) from two SHAKE256 states at once.
@inlinable
func kyberSampleNoisePair(
    _ r0: UnsafeMutablePointer<Int16>, _ r1: UnsafeMutablePointer<Int16>,
    seed: UnsafePointer<UInt8>, nonces: (UInt8, UInt8)
) {
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 2 * 33 + 2 * 136) { buffer in
        guard let base = buffer.baseAddress else { return }
        let input0 = base, input1 = base + 33, out0 = base + 66, out1 = base + 66 + 136
        input0.update(from: seed, count: 32)
        input1.update(from: seed, count: 32)
        input0[32] = nonces.0
        input1[32] = nonces.1
        var sponge = KeccakSpongeX2(
            rate: 136, first: UnsafeRawBufferPointer(start: input0, count: 33),
            second: UnsafeRawBufferPointer(start: input1, count: 33))
        sponge.squeezeBlocks(first: out0, second: out1, blocks: 1)
        kyberCenteredBinomial(out0, into: r0)
        kyberCenteredBinomial(out1, into: r1)
        sponge.clear()
        secureZero(buffer)
    }
}

/// SamplePolyCBD_2(PRF_2(seed, nonce)): a noise polynomial with coefficients in [-2, 2].
/// The seed is secret; the work has no data-dependent branches or indices.
@inlinable
func kyberSampleNoise(_ r: UnsafeMutablePointer<Int16>, seed: UnsafePointer<UInt8>, nonce: UInt8) {
    var sponge = KeccakSponge(rate: 136)
    sponge.absorb(UnsafeRawBufferPointer(start: seed, count: 32))
    var n = nonce
    withUnsafeBytes(of: &n) { sponge.absorb($0) }
    sponge.finishAbsorbing(domainSuffix: 0x1F)
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 136) { buffer in
        guard let bytes = buffer.baseAddress else { return }
        sponge.squeezeBlocks(into: UnsafeMutableRawPointer(bytes), blocks: 1)
        kyberCenteredBinomial(bytes, into: r)
        secureZero(buffer)
    }
    sponge.clear()
}
