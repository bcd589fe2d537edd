import Transport

/// Whether a server's certificate chain satisfies a request's public-key pins: the leaf
/// certificate's `SubjectPublicKeyInfo` SHA-256 must equal one of them, as with libcurl's
/// `CURLOPT_PINNEDPUBLICKEY`. No CA or host-name check is made; the key alone decides.
///
/// Platform-neutral so that it is tested on Linux; the Darwin trust challenge only extracts the DER.
enum PinDecision: Equatable {
    /// The leaf's key matches a pin: trust the server.
    case accept
    /// No pin matches; `presented` is the leaf's fingerprint when it could be read.
    case reject(presented: PublicKeyFingerprint?)

    /// - Parameters:
    ///   - chain: the certificates the server presented, DER, leaf first.
    ///   - pins: the request's pins; callers pass a non-empty list.
    static func evaluate(chain: [[UInt8]], pins: [PublicKeyFingerprint]) -> PinDecision {
        guard let presented = leafKey(of: chain) else { return .reject(presented: nil) }
        return pins.contains(presented) ? .accept : .reject(presented: presented)
    }

    /// The fingerprint of the leaf certificate's public key, or `nil` when `chain` (DER, leaf
    /// first) is empty or its leaf cannot be parsed: a server is judged by its leaf's key alone.
    static func leafKey(of chain: [[UInt8]]) -> PublicKeyFingerprint? {
        chain.first.flatMap { try? PublicKeyFingerprint(certificateDER: $0) }
    }
}
