import Foundation

/// A transport that can report the TLS public key a server presents, without trusting it and
/// without sending a request: what trust on first use needs to show a user the key it is asked
/// to accept.
///
/// `CurlTransport` conforms. A client that learns a key this way must pin it
/// (`TransferOptions.pinnedPublicKeys`) for every request afterwards, so the request reaches only
/// a server holding that key.
public protocol ServerKeyProbing: Sendable {
    /// Completes a TLS handshake with `url`'s host without verifying it and returns the
    /// fingerprint of the public key in the certificate the server presented.
    ///
    /// - Throws: `TransportError` when no handshake completes or no certificate can be read.
    func presentedPublicKey(at url: URL) async throws -> PublicKeyFingerprint
}
