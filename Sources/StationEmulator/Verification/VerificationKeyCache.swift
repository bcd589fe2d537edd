import PQCrypto
import Signing

/// Parsed ML-DSA-65 public keys by their encoding, for ``RequestVerifier``: parsing expands the
/// key's matrix (30 SHAKE128 streams), which would otherwise be repeated for every request of
/// the same device. Holds at most `capacity` keys; when full it starts over.
actor VerificationKeyCache {
    private var keys: [[UInt8]: MLDSA65.PublicKey] = [:]
    private let capacity: Int

    init(capacity: Int = 64) { self.capacity = max(1, capacity) }

    /// The parsed key for `encoding`, or `nil` when it is not a valid ML-DSA-65 public key.
    func key(for encoding: [UInt8]) -> MLDSA65.PublicKey? {
        if let known = keys[encoding] { return known }
        guard let parsed = try? MLDSA65.PublicKey(rawRepresentation: encoding) else { return nil }
        if keys.count >= capacity { keys.removeAll(keepingCapacity: true) }
        keys[encoding] = parsed
        return parsed
    }
}
