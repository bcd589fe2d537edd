import ClassicalCrypto
import Foundation
import LoopbackHTTP
import Transport

/// The TLS certificates an emulator presents to `https` requests through its in-process
/// transports: the station's (changeable) and its gateway host's (fixed, signed by a trusted
/// authority, as a public gateway's).
final class ServerKeys: Sendable {
    private let station = Locked(SimulatedCertificate(publicKey: ServerKeys.randomFingerprint(), isSignedByTrustedAuthority: true))
    private let gateway = SimulatedCertificate(publicKey: ServerKeys.randomFingerprint(), isSignedByTrustedAuthority: true)

    /// The station's certificate now.
    var stationCertificate: SimulatedCertificate { station.withLock { $0 } }

    /// Presents `certificate` from now on; returns its key.
    func present(_ certificate: SimulatedCertificate) -> PublicKeyFingerprint {
        station.withLock { $0 = certificate }
        return certificate.publicKey
    }

    /// A fresh key for the station, with a certificate of the same kind; returns its key.
    func changeStationKey() -> PublicKeyFingerprint {
        station.withLock { certificate in
            certificate.publicKey = Self.randomFingerprint()
            return certificate.publicKey
        }
    }

    /// What a server in `role` presents, read at each request (so a key change reaches every
    /// transport at once).
    func certificate(for role: InProcessTransport.Role) -> @Sendable () -> SimulatedCertificate? {
        switch role {
        case .station, .stationAndGateway: { [self] in stationCertificate }
        case .gateway: { [gateway] in gateway }
        }
    }

    /// A fingerprint of 32 random bytes: no key stands behind it (a client only compares fingerprints).
    static func randomFingerprint() -> PublicKeyFingerprint {
        // 32 bytes always make a fingerprint, so this loop runs once.
        while true {
            if let fingerprint = try? PublicKeyFingerprint(sha256: SecureRandom.bytes(count: 32)) { return fingerprint }
        }
    }
}

extension StationEmulator {
    /// The fingerprint of the public key the station presents to `https` requests through its
    /// in-process transports (``transport``, a ``StationNetwork``'s): what a client pins.
    ///
    /// The TLS handshake is simulated (see <doc:TestingWithTheEmulator>): the fingerprint is 32
    /// random bytes with no key behind it, since a client only ever compares fingerprints. A new
    /// emulator presents a random key in a certificate signed by an authority the in-process
    /// transports trust, so unpinned `https` requests go through as to a station behind a tunnel
    /// with a public certificate.
    public var serverKeyFingerprint: PublicKeyFingerprint { serverKeys.stationCertificate.publicKey }

    /// Whether the station presents a self-signed certificate (``presentSelfSignedKey(_:)``), which
    /// an unpinned `https` request refuses with `TransportError` kind `.tlsFailure`, rather than one
    /// signed by a trusted authority (``presentCATrustedKey(_:)``, the default).
    public var presentsSelfSignedKey: Bool { !serverKeys.stationCertificate.isSignedByTrustedAuthority }

    /// Makes the station present a self-signed certificate, as a station run by `run.py` does: a
    /// new random key (or `fingerprint`), trusted only by a request pinned to it. Unpinned `https`
    /// requests then fail with `TransportError` kind `.tlsFailure`, pinned ones with another key
    /// with `.pinMismatch`, neither reaching the station; a probe
    /// (`HTTPTransport.presentedPublicKey(at:)`) answers the key.
    ///
    /// - Parameter fingerprint: the key to present (for example the key of another emulator, to
    ///   play one station that moved); `nil`, the default, draws a new random one.
    /// - Returns: the fingerprint of the key now presented.
    @discardableResult
    public func presentSelfSignedKey(_ fingerprint: PublicKeyFingerprint? = nil) -> PublicKeyFingerprint {
        serverKeys.present(SimulatedCertificate(publicKey: fingerprint ?? ServerKeys.randomFingerprint(),
                                                isSignedByTrustedAuthority: false))
    }

    /// Makes the station present a certificate signed by an authority the in-process transports
    /// trust (as a tunnel's public certificate is), with a new random key (or `fingerprint`):
    /// unpinned `https` requests go through, pinned ones only when pinned to this key.
    ///
    /// - Parameter fingerprint: the key to present; `nil`, the default, draws a new random one.
    /// - Returns: the fingerprint of the key now presented.
    @discardableResult
    public func presentCATrustedKey(_ fingerprint: PublicKeyFingerprint? = nil) -> PublicKeyFingerprint {
        serverKeys.present(SimulatedCertificate(publicKey: fingerprint ?? ServerKeys.randomFingerprint(),
                                                isSignedByTrustedAuthority: true))
    }

    /// Gives the station a new random key, in a certificate of the same kind (self-signed or
    /// CA-trusted), as a station that issued itself a new certificate: every transport into this
    /// emulator sees it from its next request on, so a client that pinned the old key is refused
    /// (`TransportError` kind `.pinMismatch`; `StationClient` reports `.keyChanged`).
    ///
    /// - Returns: the fingerprint of the new key.
    @discardableResult
    public func changeServerKey() -> PublicKeyFingerprint {
        serverKeys.changeStationKey()
    }
}
