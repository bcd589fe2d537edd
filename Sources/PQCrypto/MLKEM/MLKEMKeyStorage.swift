// Parsed ML-KEM-768 keys. Expensive expansions (the matrix Â, the decoded vectors, H(ek)) happen
// once per key object, so a device that decapsulates many envelopes with one key pays for them once.

/// The parsed encapsulation key: ek bytes, H(ek), t̂ and the expanded matrix Â.
@usableFromInline
final class MLKEMPublicKeyStorage: @unchecked Sendable {
    /// The 1184-byte encoded key.
    @usableFromInline let encoded: [UInt8]
    /// H(ek) = SHA3-256(ek).
    @usableFromInline let hash: [UInt8]
    /// t̂, three NTT-domain polynomials with coefficients in [0, q).
    @usableFromInline let tHat: UnsafeMutablePointer<Int16>
    /// Â, entry (i, j) at offset (3i + j)·256, coefficients in [0, q).
    @usableFromInline let matrix: UnsafeMutablePointer<Int16>

    /// Parses and checks an encoded key; nil when a coefficient is not reduced (FIPS 203 §7.2).
    @usableFromInline init?(encoded: [UInt8]) {
        guard encoded.count == MLKEM768.publicKeyByteCount else { return nil }
        let tHat = UnsafeMutablePointer<Int16>.allocate(capacity: 3 * 256)
        let reduced = encoded.withUnsafeBufferPointer { bytes -> Bool in
            guard let base = bytes.baseAddress else { return false }
            var ok = true
            for i in 0..<3 { ok = kyberDecode12(base + 384 * i, into: tHat + 256 * i) && ok }
            return ok
        }
        guard reduced else {
            tHat.deallocate()
            return nil
        }
        let matrix = UnsafeMutablePointer<Int16>.allocate(capacity: 9 * 256)
        var hash = [UInt8](repeating: 0, count: 32)
        encoded.withUnsafeBufferPointer { bytes in
            hash.withUnsafeMutableBufferPointer { out in
                guard let base = bytes.baseAddress, let hashBase = out.baseAddress else { return }
                kyberHashKeyAndExpandMatrix(base, hash: hashBase, matrix: matrix)
            }
        }
        self.encoded = encoded
        self.tHat = tHat
        self.matrix = matrix
        self.hash = hash
    }

    /// Adopts the results of key generation (ownership of `tHat` and `matrix` passes to the key).
    @usableFromInline init(encoded: [UInt8], tHat: UnsafeMutablePointer<Int16>, matrix: UnsafeMutablePointer<Int16>) {
        self.encoded = encoded
        self.tHat = tHat
        self.matrix = matrix
        self.hash = SHA3_256.hash(data: encoded)
    }

    deinit {
        tHat.deallocate()
        matrix.deallocate()
    }
}

/// The parsed decapsulation key: ŝ, z, the public part, and the seed d‖z when it is known.
@usableFromInline
final class MLKEMPrivateKeyStorage: @unchecked Sendable {
    @usableFromInline let publicKey: MLKEMPublicKeyStorage
    /// ŝ, three NTT-domain polynomials with coefficients in [0, q). Secret.
    @usableFromInline let sHat: UnsafeMutablePointer<Int16>
    /// The implicit-rejection secret z. Secret.
    @usableFromInline let z: SecureBytes
    /// d‖z, when the key was generated or loaded from its seed. Secret.
    @usableFromInline let seed: SecureBytes?

    @usableFromInline init(publicKey: MLKEMPublicKeyStorage, sHat: UnsafeMutablePointer<Int16>, z: SecureBytes, seed: SecureBytes?) {
        self.publicKey = publicKey
        self.sHat = sHat
        self.z = z
        self.seed = seed
    }

    deinit {
        secureZero(UnsafeMutableBufferPointer(start: sHat, count: 3 * 256))
        sHat.deallocate()
    }
}
