// Expanded key material for ML-DSA-65: everything a signer or verifier needs is computed once when
// a key object is created and kept with it, because a client signs every request with one key.

/// An ML-DSA-65 public key: its encoding, tr = H(pk), Â and t1 − 512 in the extended form that
/// the verifier's challenge product reads (see MLDSAChallenge.swift).
///
/// Immutable once built, so it may be shared across tasks.
final class MLDSA65PublicKeyStorage: Sendable {
    typealias P = MLDSA65Parameters
    /// The 1952-byte encoding ρ ‖ t1.
    let encoded: MLDSABytes
    /// tr = H(pk, 64), the prefix of every message representative μ.
    let tr: MLDSABytes
    /// Â = ExpandA(ρ), k×l polynomials in the NTT domain, in [0, q), in the matrix layout (see
    /// ``MLDSAPolynomial/matrixTimesVector(_:matrix:_:)``).
    let matrix: MLDSAMatrix
    /// t1 − 512 (k polynomials, in [−512, 511]), in the aligned extended form (Int16): c·(t1 − 512)
    /// fits Int16, and c·t1 = c·(t1 − 512) + 512·c·(1 + X + … + X^255).
    let t1Extended: MLDSABuffer<Int16>

    /// Expands a 1952-byte encoding (pkDecode, Algorithm 23; every bit pattern is a valid key).
    init(encoded: MLDSABytes) {
        let matrix = MLDSAMatrix(polynomials: P.k * P.l, secret: false, zeroed: false)
        MLDSASampling.expandA(rho: encoded.bytes(0..<32), into: matrix.base)
        let t1 = MLDSAPolynomials(polynomials: P.k, secret: false, zeroed: false)
        for row in 0..<P.k {
            MLDSAEncoding.unpackT1(encoded.base + 32 + row * 320, into: t1.polynomial(row))
        }
        self.encoded = encoded
        self.matrix = matrix
        self.t1Extended = Self.extendT1(t1)
        self.tr = Self.hashPublicKey(encoded)
    }

    /// Assembles a key computed by key generation, sharing Â with the private key.
    init(encoded: MLDSABytes, tr: MLDSABytes, matrix: MLDSAMatrix, t1: MLDSAPolynomials) {
        self.encoded = encoded
        self.tr = tr
        self.matrix = matrix
        self.t1Extended = Self.extendT1(t1)
    }

    /// tr = H(pk, 64).
    static func hashPublicKey(_ encoded: MLDSABytes) -> MLDSABytes {
        let tr = MLDSABytes(count: P.hashBytes, secret: false, zeroed: false)
        var hash = MLDSAHash()
        hash.absorb(encoded.rawBytes)
        hash.finalize(into: UnsafeMutableRawBufferPointer(start: tr.base, count: tr.count))
        return tr
    }

    /// The extended form of t1 − 512 (t1 is shifted in place).
    private static func extendT1(_ t1: MLDSAPolynomials) -> MLDSABuffer<Int16> {
        for i in 0..<t1.count { t1.base[i] &-= 512 }
        let extended = MLDSABuffer<Int16>(
            count: MLDSAChallenge.alignedCount(polynomials: P.k, of: Int16.self), secret: false, zeroed: false)
        MLDSAChallenge.extendAligned(t1.base, count: P.k, into: extended.base)
        return extended
    }
}

/// An ML-DSA-65 private key: the FIPS 204 encoding (and the seed ξ when known), s1, s2 and t0 in
/// the extended form that the challenge products read (see MLDSAChallenge.swift), and the public
/// key, which holds Â.
///
/// Immutable once built; the secret buffers zero themselves when the last reference goes away.
final class MLDSA65PrivateKeyStorage: Sendable {
    typealias P = MLDSA65Parameters
    /// ξ, when the key was generated from a seed.
    let seed: MLDSABytes?
    /// The 4032-byte encoding ρ ‖ K ‖ tr ‖ s1 ‖ s2 ‖ t0; K and tr are read from here.
    let encoded: MLDSABytes
    /// s1 (l polynomials) then s2 (k), in the aligned extended form (eight copies of 512 Int16
    /// each; see MLDSAChallenge.extendAligned).
    let shortSecrets: MLDSABuffer<Int16>
    /// t0 (k polynomials), in the aligned extended form (Int32).
    let t0Extended: MLDSABuffer<Int32>
    let publicKey: MLDSA65PublicKeyStorage

    var matrix: MLDSAMatrix { publicKey.matrix }
    var shortExtended: UnsafeMutablePointer<Int16> { shortSecrets.base }
    /// K, the signer's private seed for ρ''.
    var signingSeed: UnsafeRawBufferPointer { encoded.bytes(P.skKeyOffset..<(P.skKeyOffset + 32)) }
    var tr: UnsafeRawBufferPointer { encoded.bytes(P.skTrOffset..<(P.skTrOffset + P.hashBytes)) }

    private init(seed: MLDSABytes?, encoded: MLDSABytes, s: MLDSAPolynomials, t0: MLDSAPolynomials,
                 publicKey: MLDSA65PublicKeyStorage) {
        self.seed = seed
        self.encoded = encoded
        let shortSecrets = MLDSABuffer<Int16>(
            count: MLDSAChallenge.alignedCount(polynomials: P.l + P.k, of: Int16.self), zeroed: false)
        MLDSAChallenge.extendAligned(s.base, count: P.l + P.k, into: shortSecrets.base)
        let t0Extended = MLDSABuffer<Int32>(
            count: MLDSAChallenge.alignedCount(polynomials: P.k, of: Int32.self), zeroed: false)
        MLDSAChallenge.extendAligned(t0.base, count: P.k, into: t0Extended.base)
        self.shortSecrets = shortSecrets
        self.t0Extended = t0Extended
        self.publicKey = publicKey
    }

    /// ML-DSA.KeyGen_internal(ξ) (FIPS 204 Algorithm 6) for a 32-byte ξ.
    convenience init(seed: MLDSABytes) {
        // (ρ, ρ', K) = H(ξ ‖ k ‖ l, 128)
        let expanded = MLDSABytes(count: 128)
        var hash = MLDSAHash()
        hash.absorb(seed.rawBytes)
        let dimensions: (UInt8, UInt8) = (UInt8(P.k), UInt8(P.l))
        withUnsafeBytes(of: dimensions) { hash.absorb($0) }
        hash.finalize(into: UnsafeMutableRawBufferPointer(start: expanded.base, count: 128))
        let rho = expanded.bytes(0..<32)

        let matrix = MLDSAMatrix(polynomials: P.k * P.l, secret: false, zeroed: false)
        MLDSASampling.expandA(rho: rho, into: matrix.base)
        // s = (s1, s2): small coefficients in the normal domain.
        let s = MLDSAPolynomials(polynomials: P.l + P.k, zeroed: false)
        MLDSASampling.expandS(rhoPrime: expanded.bytes(32..<96), into: s.base)
        let parts = Self.computeT(matrix: matrix, s: s)
        let publicEncoded = Self.encodePublicKey(rho: expanded.base, t1: parts.t1)
        let tr = MLDSA65PublicKeyStorage.hashPublicKey(publicEncoded)

        // skEncode (Algorithm 24)
        let encoded = MLDSABytes(count: P.privateKeyBytes, zeroed: false)
        let sk = encoded.base
        sk.update(from: expanded.base, count: 32)
        (sk + P.skKeyOffset).update(from: expanded.base + 96, count: 32)
        (sk + P.skTrOffset).update(from: tr.base, count: P.hashBytes)
        for i in 0..<P.l {
            MLDSAEncoding.packEta(s.polynomial(i), into: sk + P.skS1Offset + i * 128)
        }
        for i in 0..<P.k {
            MLDSAEncoding.packEta(s.polynomial(P.l + i), into: sk + P.skS2Offset + i * 128)
            MLDSAEncoding.packT0(parts.t0.polynomial(i), into: sk + P.skT0Offset + i * 416)
        }
        let publicKey = MLDSA65PublicKeyStorage(encoded: publicEncoded, tr: tr, matrix: matrix, t1: parts.t1)
        self.init(seed: seed, encoded: encoded, s: s, t0: parts.t0, publicKey: publicKey)
    }

    /// Loads a 4032-byte FIPS 204 private key (skDecode, Algorithm 25) and checks it: s1 and s2
    /// coefficients in [−η, η], and t0 and tr consistent with the public key recomputed from ρ, s1
    /// and s2 (so that a damaged key fails here rather than making signatures nobody accepts).
    static func load(expanded encoded: MLDSABytes) throws(PQCryptoError) -> MLDSA65PrivateKeyStorage {
        guard encoded.count == P.privateKeyBytes else {
            throw .invalidLength(what: "ML-DSA-65 private key", expected: P.privateKeyBytes, actual: encoded.count)
        }
        let sk = UnsafePointer(encoded.base)
        let s = MLDSAPolynomials(polynomials: P.l + P.k, zeroed: false)
        var invalid: Int32 = 0
        for i in 0..<P.l {
            invalid |= MLDSAEncoding.unpackEta(sk + P.skS1Offset + i * 128, into: s.polynomial(i))
        }
        for i in 0..<P.k {
            invalid |= MLDSAEncoding.unpackEta(sk + P.skS2Offset + i * 128, into: s.polynomial(P.l + i))
        }
        guard invalid == 0 else {
            throw .invalidPrivateKey(reason: "s1 or s2 has a coefficient outside [-4, 4]")
        }
        let decodedT0 = MLDSAPolynomials(polynomials: P.k, zeroed: false)
        for i in 0..<P.k {
            MLDSAEncoding.unpackT0(sk + P.skT0Offset + i * 416, into: decodedT0.polynomial(i))
        }

        let rho = encoded.bytes(0..<32)
        let matrix = MLDSAMatrix(polynomials: P.k * P.l, secret: false, zeroed: false)
        MLDSASampling.expandA(rho: rho, into: matrix.base)
        let parts = computeT(matrix: matrix, s: s)
        var difference: Int32 = 0
        for i in 0..<parts.t0.count { difference |= parts.t0.base[i] ^ decodedT0.base[i] }
        guard difference == 0 else {
            throw .invalidPrivateKey(reason: "t0 does not match rho, s1 and s2")
        }
        let publicEncoded = encodePublicKey(rho: sk, t1: parts.t1)
        let tr = MLDSA65PublicKeyStorage.hashPublicKey(publicEncoded)
        guard constantTimeEquals(tr.rawBytes, encoded.bytes(P.skTrOffset..<(P.skTrOffset + P.hashBytes))) else {
            throw .invalidPrivateKey(reason: "tr does not match the public key")
        }
        let publicKey = MLDSA65PublicKeyStorage(encoded: publicEncoded, tr: tr, matrix: matrix, t1: parts.t1)
        return MLDSA65PrivateKeyStorage(seed: nil, encoded: encoded, s: s, t0: parts.t0, publicKey: publicKey)
    }

    /// pkEncode (Algorithm 22): ρ ‖ t1.
    private static func encodePublicKey(rho: UnsafePointer<UInt8>, t1: MLDSAPolynomials) -> MLDSABytes {
        let publicKey = MLDSABytes(count: P.publicKeyBytes, secret: false, zeroed: false)
        publicKey.base.update(from: rho, count: 32)
        for row in 0..<P.k {
            MLDSAEncoding.packT1(t1.polynomial(row), into: publicKey.base + 32 + row * 320)
        }
        return publicKey
    }

    /// t = NTT^-1(Â·NTT(s1)) + s2, (t1, t0) = Power2Round(t).
    private static func computeT(matrix: MLDSAMatrix, s: MLDSAPolynomials) -> (
        t1: MLDSAPolynomials, t0: MLDSAPolynomials
    ) {
        let s1Hat = MLDSANTTPolynomials(polynomials: P.l, zeroed: false)
        MLDSAPolynomial.forwardNTT(s.base, into: s1Hat.base, count: P.l)
        let product = MLDSANTTPolynomials(polynomials: P.k, zeroed: false)
        MLDSAPolynomial.matrixTimesVector(product.base, matrix: matrix.base, s1Hat.base)
        let t1 = MLDSAPolynomials(polynomials: P.k, secret: false, zeroed: false)
        let t0 = MLDSAPolynomials(polynomials: P.k, zeroed: false)
        MLDSAPolynomial.inverseNTT(product.base, into: t0.base, count: P.k)
        let s2 = s.polynomial(P.l)
        for i in 0..<(P.k * P.n) {
            let t = MLDSAField.addQIfNegative(MLDSAField.reduce32(t0.base[i] &+ s2[i]))
            let (high, low) = MLDSAField.power2Round(t)
            t1.base[i] = high
            t0.base[i] = low
        }
        return (t1, t0)
    }
}
