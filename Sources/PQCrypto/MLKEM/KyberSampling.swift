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
    while written < needed && position + 3 <= count {
        let b0 = UInt16(bytes[position]), b1 = UInt16(bytes[position + 1]), b2 = UInt16(bytes[position + 2])
        position += 3
        let d1 = b0 | (b1 & 0x0F) << 8
        let d2 = b1 >> 4 | b2 << 4
        // The matrix is public, so rejection may branch.
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

/// Expands ρ into the 3×3 matrix Â, entry (i, j) at offset (3i + j)·256.
@inlinable
func kyberExpandMatrix(_ matrix: UnsafeMutablePointer<Int16>, rho: UnsafePointer<UInt8>) {
    for i in 0..<3 {
        for j in 0..<3 {
            kyberSampleMatrixEntry(matrix + (3 * i + j) * 256, rho: rho, i: i, j: j)
        }
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
        secureZero(buffer)
    }
    sponge.clear()
}
