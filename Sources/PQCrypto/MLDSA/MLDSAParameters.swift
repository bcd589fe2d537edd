// The ML-DSA-65 parameter set (FIPS 204 §4, Table 1) and the sizes of its encodings (Table 2).

/// Constants of ML-DSA-65. Everything else in `MLDSA/` is written for exactly these values.
enum MLDSA65Parameters {
    /// The modulus q = 2^23 − 2^13 + 1.
    static let q: Int32 = 8_380_417
    /// Coefficients per polynomial.
    static let n = 256
    /// Rows of Â (length of t, s2, w).
    static let k = 6
    /// Columns of Â (length of s1, y, z).
    static let l = 5
    /// Bound on the coefficients of s1 and s2.
    static let eta: Int32 = 4
    /// Number of ±1 coefficients of the challenge c.
    static let tau = 49
    /// β = τ·η, the largest coefficient of c·s1 and c·s2.
    static let beta: Int32 = 196
    /// Range of the masking vector y: coefficients in (−γ1, γ1].
    static let gamma1: Int32 = 1 << 19
    /// Low-order rounding range γ2 = (q − 1)/32.
    static let gamma2: Int32 = 261_888
    /// Maximum number of 1s in the hint h.
    static let omega = 55
    /// Dropped bits of t (t = t1·2^d + t0).
    static let d: Int32 = 13
    /// Length of the commitment hash c̃ (λ/4 bytes for λ = 192).
    static let challengeHashBytes = 48

    /// Encoded public key: ρ ‖ t1 (10 bits per coefficient).
    static let publicKeyBytes = 32 + k * 320
    /// Encoded private key: ρ ‖ K ‖ tr ‖ s1 ‖ s2 (4 bits each) ‖ t0 (13 bits each).
    static let privateKeyBytes = 32 + 32 + 64 + (l + k) * 128 + k * 416
    /// Encoded signature: c̃ ‖ z (20 bits per coefficient) ‖ hint (ω + k bytes).
    static let signatureBytes = challengeHashBytes + l * 640 + omega + k
    /// Bytes of w1Encode(w1): 4 bits per coefficient.
    static let w1Bytes = k * 128
    /// Length of the key-generation seed ξ, of rnd, ρ and K.
    static let seedBytes = 32
    /// Length of tr and μ.
    static let hashBytes = 64
    /// Longest context string (its length is encoded in one byte).
    static let maxContextBytes = 255

    // Offsets inside the encoded private key.
    static let skKeyOffset = 32
    static let skTrOffset = 64
    static let skS1Offset = 128
    static let skS2Offset = skS1Offset + l * 128
    static let skT0Offset = skS2Offset + k * 128
}
