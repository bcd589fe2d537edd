#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The internal interface of FIPS 204 (Sign_internal / Verify_internal, §6.2–6.3), with the
// message representative M' or μ given directly and rnd injected. Known-answer tests (ACVP,
// Wycheproof) reach ML-DSA through these; applications use the framed API in MLDSA65.swift.

extension MLDSA65.PrivateKey {
    /// ML-DSA.Sign_internal(sk, M', rnd) (Algorithm 7): signs M' exactly as given (no
    /// 0 ‖ len(ctx) ‖ ctx framing) with the 32-byte `randomness`.
    func signatureInternal(messagePrime: some DataProtocol, randomness: [UInt8]) -> Data {
        precondition(randomness.count == MLDSA65.P.seedBytes)
        let mu = MLDSABytes(count: MLDSA65.P.hashBytes)
        var hash = MLDSAHash()
        hash.absorb(storage.tr)
        hash.absorb(messagePrime)
        hash.finalize(into: UnsafeMutableRawBufferPointer(start: mu.base, count: mu.count))
        return signatureInternal(mu: mu.rawBytes, randomness: randomness)
    }

    /// Sign_internal from line 7 on, with the 64-byte message representative μ supplied by the
    /// caller ("external μ").
    func signatureInternal(mu: some DataProtocol, randomness: [UInt8]) -> Data {
        precondition(mu.count == MLDSA65.P.hashBytes && randomness.count == MLDSA65.P.seedBytes)
        let muBytes = Array(mu)
        let signature = muBytes.withUnsafeBytes { muBuffer in
            randomness.withUnsafeBytes { storage.sign(mu: muBuffer, randomness: $0) }
        }
        return Data(bytes: signature.base, count: signature.count)
    }

    /// ML-DSA.Sign (external interface) with the 32-byte rnd given instead of drawn.
    func signature(for message: some DataProtocol, context: some DataProtocol, randomness: [UInt8]) -> Data {
        precondition(randomness.count == MLDSA65.P.seedBytes && context.count <= MLDSA65.P.maxContextBytes)
        return randomness.withUnsafeBytes { signature(for: message, context: context, randomness: $0) }
    }
}

extension MLDSA65.PublicKey {
    /// ML-DSA.Verify_internal(pk, M', σ) (Algorithm 8): M' exactly as given.
    func isValidSignatureInternal(_ signature: some DataProtocol, messagePrime: some DataProtocol) -> Bool {
        let mu = MLDSABytes(count: MLDSA65.P.hashBytes)
        var hash = MLDSAHash()
        hash.absorb(storage.tr.rawBytes)
        hash.absorb(messagePrime)
        hash.finalize(into: UnsafeMutableRawBufferPointer(start: mu.base, count: mu.count))
        return verify(signature, mu: mu.rawBytes)
    }

    /// Verify_internal from the 64-byte message representative μ on ("external μ").
    func isValidSignature(_ signature: some DataProtocol, mu: some DataProtocol) -> Bool {
        guard mu.count == MLDSA65.P.hashBytes else { return false }
        return Array(mu).withUnsafeBytes { verify(signature, mu: $0) }
    }
}
