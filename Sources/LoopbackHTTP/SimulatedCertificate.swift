import Foundation
import Transport

/// The TLS certificate a server reached in process (``InProcessHTTPTransport``) presents to
/// `https` requests, reduced to what a client checks of it: the fingerprint of its public key and
/// whether an authority the client trusts signed it.
///
/// There is no handshake and no key behind it: the fingerprint is whatever the caller chose (the
/// station emulator draws 32 random bytes), and the transport judges each request by it as a TLS
/// client judges a real certificate (see ``InProcessHTTPTransport``).
package struct SimulatedCertificate: Sendable, Hashable {
    /// The SHA-256 fingerprint of the public key the certificate carries: what pins are compared with.
    package var publicKey: PublicKeyFingerprint
    /// Whether an authority the client trusts signed it (a tunnel's or a public host's certificate);
    /// `false` for a self-signed certificate, as a station's own.
    package var isSignedByTrustedAuthority: Bool

    /// A certificate carrying `publicKey`, self-signed unless `isSignedByTrustedAuthority`.
    package init(publicKey: PublicKeyFingerprint, isSignedByTrustedAuthority: Bool) {
        self.publicKey = publicKey
        self.isSignedByTrustedAuthority = isSignedByTrustedAuthority
    }

    /// What a TLS client decides about a request to `url` under `pins` when the server presents
    /// `certificate` (`nil`: the server speaks no TLS), before anything is sent: nothing for plain
    /// `http`; for `https`, `.tlsFailure` when there is no certificate, `.pinMismatch` when pins are
    /// given and none is the certificate's key, `.tlsFailure` when there are none and no trusted
    /// authority signed it.
    ///
    /// - Throws: `TransportError` with `method` and `url`, as a real transport's handshake failure.
    static func handshake(_ certificate: SimulatedCertificate?, url: URL, method: HTTPMethod,
                                  pins: [PublicKeyFingerprint]) throws {
        guard url.scheme?.lowercased() == "https" else { return }
        func failure(_ kind: TransportError.Kind, _ message: String) -> TransportError {
            TransportError(kind, method: method, url: url, message: message)
        }
        guard let certificate else {
            throw failure(.tlsFailure, "the server at \(Self.origin(of: url)) speaks no TLS")
        }
        if !pins.isEmpty {
            guard pins.contains(certificate.publicKey) else {
                throw failure(.pinMismatch, "the server's public key \(certificate.publicKey) matches none of the "
                                  + "\(pins.count) pinned")
            }
        } else if !certificate.isSignedByTrustedAuthority {
            throw failure(.tlsFailure, "self-signed certificate: no trusted authority signed the certificate of "
                              + Self.origin(of: url))
        }
    }

    /// `host:port` of `url` (port 443 when it names none).
    private static func origin(of url: URL) -> String {
        "\(url.host ?? ""):\(url.port ?? 443)"
    }
}
