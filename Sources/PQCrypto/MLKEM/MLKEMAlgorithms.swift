// ML-KEM-768 internals: K-PKE (FIPS 203 Algorithms 13–15) and ML-KEM's KeyGen/Encaps/Decaps
// (Algorithms 16–18), on raw buffers so that no array bounds checks or allocations sit in the
// hot path. Temporary secrets are zeroed before the functions return.

/// G(prefix ‖ suffix) = SHA3-512, split into two 32-byte halves written to `first` and `second`.
@inlinable
func mlkemG(
    _ prefix: UnsafeRawBufferPointer, _ suffix: UnsafeRawBufferPointer,
    first: UnsafeMutablePointer<UInt8>, second: UnsafeMutablePointer<UInt8>
) {
    var sponge = KeccakSponge(rate: 72)
    sponge.absorb(prefix)
    sponge.absorb(suffix)
    sponge.finishAbsorbing(domainSuffix: 0x06)
    sponge.squeeze(into: UnsafeMutableRawBufferPointer(start: first, count: 32))
    sponge.squeeze(into: UnsafeMutableRawBufferPointer(start: second, count: 32))
    sponge.clear()
}

/// ML-KEM.KeyGen_internal(d, z) (Algorithm 16 with K-PKE.KeyGen, Algorithm 13).
@usableFromInline
func mlkemGenerateKey(d: UnsafePointer<UInt8>, z: UnsafePointer<UInt8>) -> MLKEMPrivateKeyStorage {
    let matrix = UnsafeMutablePointer<Int16>.allocate(capacity: 9 * 256)
    let sHat = UnsafeMutablePointer<Int16>.allocate(capacity: 3 * 256)
    let tHat = UnsafeMutablePointer<Int16>.allocate(capacity: 3 * 256)
    var encoded = [UInt8](repeating: 0, count: MLKEM768.publicKeyByteCount)
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { seeds in
        guard let rho = seeds.baseAddress else { return }
        let sigma = rho + 32
        // (ρ, σ) = G(d ‖ k), with k = 3 as the domain separator of final FIPS 203.
        var k: UInt8 = 3
        withUnsafeBytes(of: &k) { kByte in
            mlkemG(UnsafeRawBufferPointer(start: d, count: 32), kByte, first: rho, second: sigma)
        }
        kyberExpandMatrix(matrix, rho: rho)
        withUnsafeTemporaryAllocation(of: Int16.self, capacity: 3 * 256) { errorBuffer in
            guard let e = errorBuffer.baseAddress else { return }
            kyberSampleNoisePair(sHat, sHat + 256, seed: sigma, nonces: (0, 1))
            kyberSampleNoisePair(sHat + 512, e, seed: sigma, nonces: (2, 3))
            kyberSampleNoisePair(e + 256, e + 512, seed: sigma, nonces: (4, 5))
            for i in 0..<3 {
                kyberNTT(sHat + 256 * i)
                kyberNTT(e + 256 * i)
            }
            for i in 0..<3 {
                let t = tHat + 256 * i
                let row = matrix + 3 * 256 * i
                kyberBaseMultiplyAccumulate(t, row, sHat, row + 256, sHat + 256, row + 512, sHat + 512)
                for x in 0..<256 {
                    // To the normal domain (×R², then R^-1 from the reduction), add ê, reduce.
                    let normal = kyberMontgomeryReduce(Int32(t[x]) &* 1353)
                    t[x] = kyberCanonical(kyberBarrettReduce(normal &+ e[256 * i + x]))
                }
            }
            for x in 0..<(3 * 256) { sHat[x] = kyberCanonical(sHat[x]) }
            secureZero(errorBuffer)
        }
        encoded.withUnsafeMutableBufferPointer { out in
            guard let base = out.baseAddress else { return }
            for i in 0..<3 { kyberEncode12(tHat + 256 * i, into: base + 384 * i) }
            (base + 1152).update(from: rho, count: 32)
        }
        secureZero(seeds)
    }
    let seed = SecureBytes(count: 64) { buffer in
        buffer.copyMemory(from: UnsafeRawBufferPointer(start: d, count: 32))
        UnsafeMutableRawBufferPointer(rebasing: buffer[32...]).copyMemory(from: UnsafeRawBufferPointer(start: z, count: 32))
    }
    let zBytes = SecureBytes(count: 32) { $0.copyMemory(from: UnsafeRawBufferPointer(start: z, count: 32)) }
    let publicKey = MLKEMPublicKeyStorage(encoded: encoded, tHat: tHat, matrix: matrix)
    return MLKEMPrivateKeyStorage(publicKey: publicKey, sHat: sHat, z: zBytes, seed: seed)
}

/// K-PKE.Encrypt(ek, m, r) (Algorithm 14): writes the 1088-byte ciphertext.
@inlinable
func kyberEncrypt(
    _ key: MLKEMPublicKeyStorage, message: UnsafePointer<UInt8>, coins: UnsafePointer<UInt8>,
    into ciphertext: UnsafeMutablePointer<UInt8>
) {
    withUnsafeTemporaryAllocation(of: Int16.self, capacity: 11 * 256) { workspace in
        guard let base = workspace.baseAddress else { return }
        let rHat = base, e1 = base + 768, e2 = base + 1536, u = base + 1792, v = base + 2560
        // r̂ uses nonces 0–2, e1 3–5 and e2 6; r̂ and e1 are contiguous in the workspace.
        kyberSampleNoisePair(rHat, rHat + 256, seed: coins, nonces: (0, 1))
        kyberSampleNoisePair(rHat + 512, e1, seed: coins, nonces: (2, 3))
        kyberSampleNoisePair(e1 + 256, e1 + 512, seed: coins, nonces: (4, 5))
        kyberSampleNoise(e2, seed: coins, nonce: 6)
        for i in 0..<3 { kyberNTT(rHat + 256 * i) }
        let a = key.matrix
        for i in 0..<3 {
            // û_i = Σ_j Â[j][i] ∘ r̂_j (the transpose of Â).
            let ui = u + 256 * i
            kyberBaseMultiplyAccumulate(
                ui, a + 256 * i, rHat, a + 256 * (3 + i), rHat + 256, a + 256 * (6 + i), rHat + 512)
            kyberInverseNTT(ui)
            for x in 0..<256 { ui[x] = kyberBarrettReduce(ui[x] &+ e1[256 * i + x]) }
            kyberCompressEncode10(ui, into: ciphertext + 320 * i)
        }
        let t = key.tHat
        kyberBaseMultiplyAccumulate(v, t, rHat, t + 256, rHat + 256, t + 512, rHat + 512)
        kyberInverseNTT(v)
        let mu = u  // û is encoded already; reuse its space for Decompress_1(m).
        kyberMessageToPolynomial(message, into: mu)
        for x in 0..<256 { v[x] = kyberBarrettReduce(v[x] &+ e2[x] &+ mu[x]) }
        kyberCompressEncode4(v, into: ciphertext + 960)
        secureZero(workspace)
    }
}

/// K-PKE.Decrypt(dk, c) (Algorithm 15): writes the 32-byte message.
@inlinable
func kyberDecrypt(_ sHat: UnsafePointer<Int16>, ciphertext: UnsafePointer<UInt8>, into message: UnsafeMutablePointer<UInt8>) {
    withUnsafeTemporaryAllocation(of: Int16.self, capacity: 5 * 256) { workspace in
        guard let base = workspace.baseAddress else { return }
        let u = base, v = base + 768, w = base + 1024
        for i in 0..<3 {
            kyberDecodeDecompress10(ciphertext + 320 * i, into: u + 256 * i)
            kyberNTT(u + 256 * i)
        }
        kyberBaseMultiplyAccumulate(w, sHat, u, sHat + 256, u + 256, sHat + 512, u + 512)
        kyberInverseNTT(w)
        kyberDecodeDecompress4(ciphertext + 960, into: v)
        for x in 0..<256 { w[x] = kyberBarrettReduce(v[x] &- w[x]) }
        kyberPolynomialToMessage(w, into: message)
        secureZero(workspace)
    }
}

/// ML-KEM.Encaps_internal(ek, m) (Algorithm 17).
@inlinable
func mlkemEncapsulate(
    _ key: MLKEMPublicKeyStorage, randomness m: UnsafePointer<UInt8>,
    sharedSecret: UnsafeMutablePointer<UInt8>, ciphertext: UnsafeMutablePointer<UInt8>
) {
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { coinsBuffer in
        guard let coins = coinsBuffer.baseAddress else { return }
        key.hash.withUnsafeBytes { hash in
            mlkemG(UnsafeRawBufferPointer(start: m, count: 32), hash, first: sharedSecret, second: coins)
        }
        kyberEncrypt(key, message: m, coins: coins, into: ciphertext)
        secureZero(coinsBuffer)
    }
}

/// ML-KEM.Decaps_internal(dk, c) (Algorithm 18) with implicit rejection: a ciphertext that does
/// not re-encrypt to itself yields J(z ‖ c). The compare and the selection are masked, not branched.
@inlinable
func mlkemDecapsulate(
    _ key: MLKEMPrivateKeyStorage, ciphertext: UnsafePointer<UInt8>, sharedSecret: UnsafeMutablePointer<UInt8>
) {
    let ciphertextCount = MLKEM768.ciphertextByteCount
    // Scratch: m' (32) ‖ K' (32) ‖ r' (32) ‖ K̄ (32) ‖ c' (1088).
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 128 + ciphertextCount) { scratch in
        guard let base = scratch.baseAddress else { return }
        let message = base, candidate = base + 32, coins = base + 64, rejection = base + 96
        let reencrypted = base + 128
        kyberDecrypt(key.sHat, ciphertext: ciphertext, into: message)
        key.publicKey.hash.withUnsafeBytes { hash in
            mlkemG(UnsafeRawBufferPointer(start: message, count: 32), hash, first: candidate, second: coins)
        }
        var j = KeccakSponge(rate: 136)
        j.absorb(UnsafeRawBufferPointer(start: key.z.pointer.baseAddress, count: 32))
        j.absorb(UnsafeRawBufferPointer(start: ciphertext, count: ciphertextCount))
        j.finishAbsorbing(domainSuffix: 0x1F)
        j.squeeze(into: UnsafeMutableRawBufferPointer(start: rejection, count: 32))
        j.clear()
        kyberEncrypt(key.publicKey, message: message, coins: coins, into: reencrypted)
        var difference: UInt8 = 0
        for i in 0..<ciphertextCount { difference |= ciphertext[i] ^ reencrypted[i] }
        // 0xFF when the ciphertexts are equal, 0x00 otherwise.
        let equalMask = UInt8(truncatingIfNeeded: ((UInt32(difference) &+ 0xFF) >> 8) &- 1)
        for i in 0..<32 {
            sharedSecret[i] = (candidate[i] & equalMask) | (rejection[i] & ~equalMask)
        }
        secureZero(scratch)
    }
}
